SELECT count(*) FROM docs WHERE MATCH(body) AGAINST('+{{word:1}}' IN BOOLEAN MODE)
