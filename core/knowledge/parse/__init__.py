"""Reading documents into text and chunks: files and their formats (PDF and Word in a
process of their own), Markdown and HTML as blocks, and the chunker that packs them."""
