"""trgen: the schema compiler (schema -> checked IR -> C through templates)."""
