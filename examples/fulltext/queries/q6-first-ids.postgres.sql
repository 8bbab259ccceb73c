SELECT id FROM docs WHERE tsv @@ to_tsquery('simple', '{{word:20}}') ORDER BY id LIMIT 20
