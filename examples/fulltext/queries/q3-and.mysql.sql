SELECT count(*) FROM docs WHERE MATCH(body) AGAINST('+{{word:5}} +{{word:60}}' IN BOOLEAN MODE)
