SELECT id FROM docs WHERE tsv @@ to_tsquery('simple', '{{word:30}} | {{word:90}}') ORDER BY ts_rank(tsv, to_tsquery('simple', '{{word:30}} | {{word:90}}')) DESC, id LIMIT 10
