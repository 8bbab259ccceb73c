SELECT count(*) FROM docs WHERE tsv @@ to_tsquery('simple', '{{word:1}} <-> {{word:2}}')
