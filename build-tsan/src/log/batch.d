build-tsan/src/log/batch.o: src/log/batch.c src/log/batch.h \
 src/util/buf.h src/util/err.h src/log/codec.h src/util/crc32c.h \
 src/util/varint.h
src/log/batch.h:
src/util/buf.h:
src/util/err.h:
src/log/codec.h:
src/util/crc32c.h:
src/util/varint.h:
