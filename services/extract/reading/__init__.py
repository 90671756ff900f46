"""Reading a page once: its render, its words (text layer or OCR), what it shows and hides,
its ruled lines, its file's hints, and its sheet identity."""
