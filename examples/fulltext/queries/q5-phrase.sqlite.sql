SELECT count(*) FROM docs_fts WHERE docs_fts MATCH '"{{word:1}} {{word:2}}"'
