# db_bench-options.sh -- sourced by vs-db_bench.sh and kv-profile.sh: benchmark_compare.sh's
# constants (spec workloads-more.md D3), which are dbdelta's rocksdb: defaults, as db_bench
# flags in the array COMMON for NUM keys.
COMMON=(--key_size=20 --value_size=400 --num="$NUM" --compression_type=lz4
    --cache_size=$((1 << 30)) --write_buffer_size=$((32 << 20)) --max_write_buffer_number=8
    --target_file_size_base=$((32 << 20)) --max_bytes_for_level_base=$((128 << 20))
    --max_background_jobs=8 --block_size=8192 --bloom_bits=10 --bytes_per_sync=$((1 << 20))
    --level_compaction_dynamic_level_bytes=true --num_levels=8 --open_files=-1
    --level0_file_num_compaction_trigger=4 --level0_slowdown_writes_trigger=20
    --level0_stop_writes_trigger=30 --compression_ratio=0.5 --verify_checksum=1
    --statistics=0 --histogram=1 --threads=1 --sync=0 --cache_index_and_filter_blocks=0)
