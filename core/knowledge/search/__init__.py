"""Finding passages: the catalog of current chunks, the keyword index and the vectors in
Chroma, the embedding models, and the hybrid search that fuses them."""
