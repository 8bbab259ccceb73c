SELECT service, path, count() AS n FROM logs_enum WHERE level != 'debug' GROUP BY service, path ORDER BY n DESC, service, path LIMIT 10
