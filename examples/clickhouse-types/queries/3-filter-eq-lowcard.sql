SELECT count() FROM logs_lowcard WHERE level = 'error'
