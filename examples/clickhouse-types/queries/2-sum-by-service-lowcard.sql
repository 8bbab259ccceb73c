SELECT service, count() AS n, sum(bytes) AS b FROM logs_lowcard GROUP BY service ORDER BY service
