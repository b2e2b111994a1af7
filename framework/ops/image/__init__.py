"""MXNet's image operators (`_image_*`): the transforms, colour jitter."""
