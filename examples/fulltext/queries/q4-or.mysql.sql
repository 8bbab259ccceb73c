SELECT count(*) FROM docs WHERE MATCH(body) AGAINST('{{word:400}} {{word:401}}' IN BOOLEAN MODE)
