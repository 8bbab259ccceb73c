SELECT count(*) FROM docs_fts WHERE docs_fts MATCH '{{word:400}} OR {{word:401}}'
