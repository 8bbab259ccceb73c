SELECT count(*) FROM docs_fts WHERE docs_fts MATCH '{{word:5}} AND {{word:60}}'
