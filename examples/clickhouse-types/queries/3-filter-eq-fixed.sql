SELECT count() FROM logs_fixed WHERE level = 'error'
