"""Neural-network layers at inference: activations, softmax, dense, (de)convolution, deformable
convolution, pooling, normalisations, RNN, sampling, sequence ops, dropout, embedding,
upsampling, padding."""
