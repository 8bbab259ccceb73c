SELECT service, count() AS n, sum(bytes) AS b FROM logs_enum GROUP BY service ORDER BY service
