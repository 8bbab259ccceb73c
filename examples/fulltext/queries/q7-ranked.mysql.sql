SELECT id FROM docs WHERE MATCH(body) AGAINST('{{word:30}} {{word:90}}') ORDER BY MATCH(body) AGAINST('{{word:30}} {{word:90}}') DESC, id LIMIT 10
