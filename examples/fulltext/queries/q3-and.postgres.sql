SELECT count(*) FROM docs WHERE tsv @@ to_tsquery('simple', '{{word:5}} & {{word:60}}')
