/*
 * gemmi8-bench: reads the shape file (bench/shapes.txt): "Row Col Depth" a line,
 * that is N M K in gemmi8's convention; '#' starts a comment.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"

/* Parses one positive decimal number at *p, advancing past it. */
static int parse_size(const char** p, size_t* value)
{
  const char* s = *p;
  while (*s == ' ' || *s == '\t') {
    s++;
  }
  if (!isdigit((unsigned char) *s)) {
    return -1;
  }
  char* end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || v == 0 || v > (unsigned long long) (size_t) -1) {
    return -1;
  }
  *value = (size_t) v;
  *p = end;
  return 0;
}

long bench_read_shapes(const char* path, bench_shape* shapes, size_t cap, char* err,
                       size_t err_size)
{
  FILE* f = fopen(path, "r");
  if (f == NULL) {
    snprintf(err, err_size, "%s: %s", path, strerror(errno));
    return -1;
  }
  char line[1024];
  long count = 0;
  for (unsigned number = 1; fgets(line, sizeof(line), f) != NULL; number++) {
    if (strchr(line, '\n') == NULL && !feof(f)) {
      snprintf(err, err_size, "%s:%u: line too long", path, number);
      count = -1;
      break;
    }
    char* comment = strchr(line, '#');
    if (comment != NULL) {
      *comment = '\0';
    }
    const char* p = line;
    while (isspace((unsigned char) *p)) {
      p++;
    }
    if (*p == '\0') {
      continue;
    }
    bench_shape shape;
    if (parse_size(&p, &shape.row) != 0 || parse_size(&p, &shape.col) != 0 ||
        parse_size(&p, &shape.depth) != 0) {
      snprintf(err, err_size, "%s:%u: expected three positive integers 'Row Col Depth'",
               path, number);
      count = -1;
      break;
    }
    while (isspace((unsigned char) *p)) {
      p++;
    }
    if (*p != '\0') {
      snprintf(err, err_size, "%s:%u: unexpected text after 'Row Col Depth'", path, number);
      count = -1;
      break;
    }
    for (long i = 0; i < count && (size_t) i < cap; i++) {
      if (shapes[i].row == shape.row && shapes[i].col == shape.col &&
          shapes[i].depth == shape.depth) {
        snprintf(err, err_size, "%s:%u: shape %zux%zux%zu listed twice", path, number,
                 shape.row, shape.col, shape.depth);
        fclose(f);
        return -1;
      }
    }
    if ((size_t) count < cap) {
      shapes[count] = shape;
    }
    count++;
  }
  if (count >= 0 && ferror(f)) {
    snprintf(err, err_size, "%s: read error", path);
    count = -1;
  }
  fclose(f);
  return count;
}
