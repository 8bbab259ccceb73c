SELECT count(*) FROM docs WHERE tsv @@ to_tsquery('simple', '{{word:400}} | {{word:401}}')
