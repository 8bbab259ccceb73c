SELECT count() FROM logs_enum WHERE level = 'error'
