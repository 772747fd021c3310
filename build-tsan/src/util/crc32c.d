build-tsan/src/util/crc32c.o: src/util/crc32c.c src/util/crc32c.h
src/util/crc32c.h:
