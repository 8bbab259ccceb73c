SELECT count(*) FROM docs WHERE MATCH(body) AGAINST('"{{word:1}} {{word:2}}"' IN BOOLEAN MODE)
