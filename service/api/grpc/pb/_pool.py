"""The descriptor pool of hybridserve's generated gRPC messages (see scripts/gen_grpc.sh):
private, so that tritonclient's own `inference.*` definitions can live in the same process."""
from google.protobuf import descriptor_pool

POOL = descriptor_pool.DescriptorPool()
