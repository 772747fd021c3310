build-tsan/src/log/codec.o: src/log/codec.c src/log/codec.h \
 src/util/buf.h src/util/err.h src/log/batch.h
src/log/codec.h:
src/util/buf.h:
src/util/err.h:
src/log/batch.h:
