SELECT count() FROM logs_string WHERE level = 'error'
