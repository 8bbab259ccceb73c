SELECT service, count() AS n, sum(bytes) AS b FROM logs_string GROUP BY service ORDER BY service
