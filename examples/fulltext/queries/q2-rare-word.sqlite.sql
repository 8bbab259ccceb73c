SELECT count(*) FROM docs_fts WHERE docs_fts MATCH '{{word:3000}}'
