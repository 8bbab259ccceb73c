SELECT count(*) FROM docs WHERE tsv @@ to_tsquery('simple', '{{word:3000}}')
