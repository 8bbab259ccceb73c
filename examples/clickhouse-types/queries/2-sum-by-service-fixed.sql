SELECT service, count() AS n, sum(bytes) AS b FROM logs_fixed GROUP BY service ORDER BY service
