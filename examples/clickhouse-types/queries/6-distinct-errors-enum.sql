SELECT uniqExact(service, path) FROM logs_enum WHERE status >= 400
