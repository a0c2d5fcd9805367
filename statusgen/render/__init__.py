"""Render: the tree of files (JSON documents, feeds, pages) from the store, written and swapped in."""
