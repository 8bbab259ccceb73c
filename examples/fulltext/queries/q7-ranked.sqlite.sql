SELECT rowid FROM docs_fts WHERE docs_fts MATCH '{{word:30}} OR {{word:90}}' ORDER BY rank, rowid LIMIT 10
