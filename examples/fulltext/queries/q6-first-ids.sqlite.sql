SELECT rowid FROM docs_fts WHERE docs_fts MATCH '{{word:20}}' ORDER BY rowid LIMIT 20
