"""Context sent with a message: buffers, files and what the model reads of them."""
