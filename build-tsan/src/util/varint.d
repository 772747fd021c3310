build-tsan/src/util/varint.o: src/util/varint.c src/util/varint.h
src/util/varint.h:
