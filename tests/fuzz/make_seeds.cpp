// Writes the seed corpora of the fuzz targets: valid files of every format and variant the
// readers accept (and the forms each target's first byte selects, see each target's comment),
// written with the engine's own writers where it has them (.npy, graph and index files) and
// byte by byte or with libhdf5 otherwise. libFuzzer mutates from these.
//   fuzz_make_seeds OUT_FOLDER      → OUT_FOLDER/<target>/<seed>
#include "FuzzBase.h"

#include "nearscape/core/Context.h"
#include "nearscape/index/AnnIndex.h"
#include "nearscape/io/ArtefactCache.h"
#include "nearscape/io/GraphFile.h"
#include "nearscape/io/Npy.h"

#include <hdf5.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace nearscape;

namespace {

fs::path g_out;

void put(const std::string& target, const std::string& name, const std::string& bytes) {
  fs::create_directories(g_out / target);
  std::ofstream(g_out / target / name, std::ios::binary) << bytes;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

template <typename T> std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::string npyBytes(const std::string& descr, const std::string& shape, const std::string& data,
                     int major = 1) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t pre = major == 1 ? 10 : 12;
  const std::size_t total = pre + dict.size() + 1;
  dict.append((total + 63) / 64 * 64 - total, ' ');
  dict.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(char(major));
  out.push_back(0);
  const std::size_t len = dict.size();
  out.push_back(char(len & 0xff));
  out.push_back(char(len >> 8));
  if (major != 1)
    out.append(2, '\0');
  return out + dict + data;
}

std::string gzip(const std::string& bytes) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, uLong(bytes.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = uInt(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string be32(std::uint32_t v) {
  return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

std::string idxBytes(int type, const std::vector<std::uint32_t>& dims, const std::string& data) {
  std::string out = {0, 0, char(type), char(dims.size())};
  for (auto d : dims)
    out += be32(d);
  return out + data;
}

std::string le16(std::size_t v) {
  return {char(v & 0xff), char(v >> 8)};
}

std::vector<float> values(std::size_t n, float scale = 1.0f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = scale * float((i * 37) % 17) / 8.0f - 1.0f;
  return v;
}

void npySeeds() {
  const fs::path tmp = g_out / "tmp";
  fs::create_directories(tmp);
  const Matrix<float> m(values(24), 6, 4);
  writeNpy(tmp / "f4.npy", m.view());
  const std::vector<std::int32_t> ids32 = {1, 2, 0, 2, 0, 1};
  writeNpy(tmp / "i4.npy", MatrixView<std::int32_t>{ids32.data(), 3, 2});
  const std::vector<std::int64_t> ids64 = {1, 2, 0, 2, 0, -1};
  writeNpy(tmp / "i8.npy", MatrixView<std::int64_t>{ids64.data(), 3, 2});
  std::vector<std::string> files = {slurp(tmp / "f4.npy"), slurp(tmp / "i4.npy"),
                                    slurp(tmp / "i8.npy")};
  std::vector<double> f8(12);
  for (std::size_t i = 0; i < f8.size(); ++i)
    f8[i] = double(i) * 0.25 - 1;
  files.push_back(npyBytes("<f8", "(3, 4)", raw(f8)));
  files.push_back(npyBytes(
      "<f2", "(2, 3)", raw(std::vector<std::uint16_t>{0x3c00, 0xbc00, 0, 0x4000, 0x3800, 0x7bff})));
  files.push_back(npyBytes("|u1", "(4, 3)",
                           std::string("\x00\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xff", 12)));
  files.push_back(npyBytes("|i1", "(5,)", std::string("\x01\xff\x7f\x80\x00", 5)));
  files.push_back(npyBytes("<f4", "(2, 2)", raw(values(4)), 2));
  files.push_back(npyBytes("<f4", "(3, 1)", raw(std::vector<float>{1e30f, -0.0f, 1e-40f})));
  for (std::size_t i = 0; i < files.size(); ++i) {
    put("npy", "seed" + std::to_string(i) + ".npy", files[i]);
    put("npy_header", "seed" + std::to_string(i) + ".npy", files[i]);
  }
  fs::remove_all(tmp);
}

void vecsSeeds() {
  std::string f, b, iv;
  for (int r = 0; r < 5; ++r) {
    const std::int32_t d = 4;
    f += raw(std::vector<std::int32_t>{d}) + raw(values(4, float(r + 1)));
    iv += raw(std::vector<std::int32_t>{d, r, -r, 1000 * r, 7});
    b += raw(std::vector<std::int32_t>{d}) + std::string{char(r), char(255 - r), 0, 9};
  }
  put("vecs", "seed.fvecs", std::string(1, '\0') + f);
  put("vecs", "seed.bvecs", std::string(1, '\1') + b);
  put("vecs", "seed.ivecs", std::string(1, '\2') + iv);
}

void tsvSeeds() {
  put("tsv_vectors", "plain.tsv", "0.1\t0.2\t0.3\n-1\t2e3\t+5\n4\t5\t6\n");
  put("tsv_vectors", "bom.tsv",
      "\xef\xbb\xbf"
      "1.5\t2.5\n3.5\t4.5\r\n");
  put("tsv_vectors", "one.tsv", "42\n");
  put("metadata_tsv", "single.tsv", std::string(1, char(3)) + "cat\ndog\ncat\n");
  put("metadata_tsv", "header.tsv",
      std::string(1, char(3)) +
          "label\ttext\tscore\nA\tfirst item\t0.5\nB\tsecond <b>item</b>\t-2\nA\t\t1e3\n");
  put("metadata_tsv", "bom.tsv",
      std::string(1, char(2)) + "\xef\xbb\xbf"
                                "class\tname\nx\ty\nz\tw\n");
  put("metadata_tsv", "any.tsv",
      std::string(1, char(200)) + "title\n\xc3\xa9t\xc3\xa9\n\x1b[31mred\n");
}

void studySeeds() {
  put("study_csv", "study.csv",
      "run,index,k,build.build_k,build.degree,build.nlist,ef,nprobe,recall,qps,p50_ms,p99_ms,"
      "build_s,bytes,pareto,pareto_all\n"
      "1,graph,10,32,32,,16,,0.9,5000,0.2,0.4,1.5,4096,1,1\n"
      "1,graph,10,32,32,,64,,0.99,2000,0.5,1,1.5,4096,1,1\n"
      "2,ivf,10,,,64,,1,0.5,9000,0.1,0.2,0.5,2048,1,1\n"
      "0,exact,10,,,,,,1,1500,0.66,1.3,0.01,0,1,1\n");
  put("study_csv", "one-run.csv",
      "nprobe,recall,qps,p50_ms,p99_ms,build_s,bytes,pareto\n1,0.5,900,1,2,0.1,100,1\r\n"
      "4,0.9,300,3,5,0.1,100,1\n");
}

void regexSeeds() {
  // Byte 0: even for a regular expression, odd for a substring; the pattern; then one item a line.
  const std::string regex(1, '\0'), substring(1, '\1');
  put("regex_search", "alternation", regex + "^(tabby cat|hound)$\ncat\nTabby Cat\nhound\nbird");
  put("regex_search", "long-cell",
      regex + "a*b\n" + std::string(50000, 'a') + "\n" + std::string(49999, 'a') + "b");
  put("regex_search", "nested-plus",
      regex + "(a+)+$\n" + std::string(34, 'a') + "b\n" + std::string(35, 'a'));
  put("regex_search", "nfa-fallback",
      regex + "[a-z]*a[a-z]{60}q9\n" + std::string(3000, 'x') + "a" + std::string(60, 'y') + "q9");
  put("regex_search", "classes",
      regex + "\\d{2,}\\s+\\p{L}+|[[:upper:]]\\b\n12 été\nX y\n\xff\xfe");
  put("regex_search", "unclosed", regex + "(\nabc");
  put("regex_search", "id", substring + "2\nzero\none\ntwo\n");
  put("regex_search", "substring", substring + "CAT\ncat\nconcatenate\ndog");
}

void sessionSeeds() {
  put("session", "full.nearscape", R"({
  "format": "nearscape-session", "version": 1, "data": "data.npy", "metadata": "data.meta.tsv",
  "content_hash": "0123456789abcdef0123456789abcdef", "metric": "cos", "colour_by": "label",
  "search": {"text": "(a+)+$", "regex": true}, "hidden": ["cat"], "shown_range": [0.5, 2],
  "selection": [1, 2, 3], "selected": 4, "path_to": 7, "dim": 3,
  "camera": {"focal": [0, 0, 0], "position": [0, 0, 10], "up": [0, 1, 0], "scale": 2.5},
  "window": "AAAA/wAAAAD9"
})");
  put("session", "minimal.nearscape",
      R"({"format": "nearscape-session", "version": 1, "data": "/abs/data.npy"})");
  put("session", "nulls.nearscape",
      R"({"format": "nearscape-session", "version": 1, "data": "d.h5", "metadata": null,
          "shown_range": null, "camera": null, "metric": "", "selection": []})");
  put("session", "manhattan.nearscape",
      R"({"format": "nearscape-session", "version": 1, "data": "d.npy", "metric": "manhattan"})");
  put("session", "long-search.nearscape",
      R"({"format": "nearscape-session", "version": 1, "data": "d.npy", "search": {"text": ")" +
          std::string(50000, 'a') + R"(", "regex": true}})");
}

void idxSeeds() {
  std::string pixels;
  for (int i = 0; i < 3 * 4 * 4; ++i)
    pixels.push_back(char(i * 5));
  const std::string images = idxBytes(0x08, {3, 4, 4}, pixels);
  const std::string labels = idxBytes(0x08, {3}, std::string("\x01\x00\x09", 3));
  put("idx", "plain", std::string(1, '\0') + images);
  put("idx", "gz", std::string(1, '\1') + images);
  put("idx", "rawgz", std::string(1, '\2') + gzip(images));
  put("idx", "folder", std::string(1, '\3') + images);
  put("idx", "plain-labels", std::string(1, '\4') + le16(images.size()) + images + labels);
  put("idx", "gz-labels", std::string(1, '\5') + le16(images.size()) + images + labels);
  const std::string gi = gzip(images);
  put("idx", "rawgz-labels", std::string(1, '\6') + le16(gi.size()) + gi + gzip(labels));
  put("idx", "folder-labels", std::string(1, '\7') + le16(images.size()) + images + labels);
  std::string f32;
  for (float v : values(6))
    f32 += be32(*reinterpret_cast<const std::uint32_t*>(&v));
  put("idx", "float", std::string(1, '\0') + idxBytes(0x0D, {3, 2}, f32));
  put("idx", "int16",
      std::string(1, '\0') +
          idxBytes(0x0B, {2, 2}, std::string("\x00\x01\xff\xff\x80\x00\x7f\xff", 8)));
}

void hdf5Seeds() {
  const fs::path path = g_out / "tmp.hdf5";
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  auto dataset = [&](const char* name, hid_t type, hsize_t rows, hsize_t cols, const void* data) {
    hsize_t dims[2] = {rows, cols};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t ds = H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(space);
  };
  const auto train = values(8 * 3), test = values(2 * 3, 0.5f);
  const std::vector<std::int32_t> neighbors = {0, 1, 2, 3, 4, 5};
  const std::vector<float> distances = {0.1f, 0.2f, 0.3f, 0.1f, 0.2f, 0.3f};
  dataset("train", H5T_NATIVE_FLOAT, 8, 3, train.data());
  dataset("test", H5T_NATIVE_FLOAT, 2, 3, test.data());
  dataset("neighbors", H5T_NATIVE_INT32, 2, 3, neighbors.data());
  dataset("distances", H5T_NATIVE_FLOAT, 2, 3, distances.data());
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  const hid_t scalar = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(file, "distance", type, scalar, H5P_DEFAULT, H5P_DEFAULT);
  const char* angular = "angular";
  H5Awrite(attr, type, &angular);
  H5Aclose(attr);
  H5Sclose(scalar);
  H5Tclose(type);
  H5Fclose(file);
  put("hdf5_raw", "ann.hdf5", slurp(path));
  fs::remove(path);
  // Descriptions (hdf5.cpp): flags, rows, cols for train, test, neighbors, distances; the
  // attribute's kind, length and text; then the values.
  const std::string v = raw(values(64));
  auto described = [&](const std::string& shapes, const std::string& attribute) {
    return shapes + attribute + v;
  };
  const std::string euclidean = std::string{2, 9} + "euclidean";
  put("hdf5", "train-only", described(std::string{1, 6, 4} + std::string(9, '\0'), euclidean));
  put("hdf5", "all", described(std::string{1, 6, 4, 1, 2, 4, 5, 2, 3, 1, 2, 3}, euclidean));
  put("hdf5", "chunked-f64",
      described(std::string{0x13, 8, 3} + std::string(9, '\0'), std::string{1, 3} + "dot"));
  put("hdf5", "unwritten",
      described(std::string{0x21, 20, 20} + std::string(9, '\0'), std::string{3, 7} + "angular"));
  put("hdf5", "huge-unwritten",
      described(std::string{char(0xB1), 16, 16} + std::string(9, '\0'), std::string{0, 0}));
  put("hdf5", "string-array",
      described(std::string{1, 4, 2} + std::string(9, '\0'), std::string{4, 9} + "euclidean"));
  put("hdf5", "int-attr",
      described(std::string{1, 4, 2} + std::string(9, '\0'), std::string{5, 0}));
  put("hdf5", "spacepad",
      described(std::string{1, 4, 2} + std::string(9, '\0'), std::string{6, 7} + "angular"));
}

void graphSeeds() {
  const fs::path path = g_out / "tmp.nsg";
  GraphFile g;
  const std::vector<std::int32_t> ids = {1, 2, 0, 2, 0, 1, 4, -1, 3, 2};
  const std::vector<float> d = {0.5f, 1, 0.5f, 2, 1, 2, 0.25f, 0, 0.25f, 3};
  g.ids = Matrix<std::int32_t>(ids, 5, 2);
  g.distances = Matrix<float>(d, 5, 2);
  g.contentHash = "0123456789abcdef0123456789abcdef";
  g.paramsJson = R"({"method":"exact","k":2})";
  writeGraphFile(path, g);
  put("graph_file", "l2.nsg", slurp(path));
  g.metric = Metric::InnerProduct;
  g.distances = Matrix<float>(std::vector<float>{-1, -0.5f, 0, 0.5f, -2, 1, 3, 0, -3, 2}, 5, 2);
  writeGraphFile(path, g);
  put("graph_file", "ip.nsg", slurp(path));
  fs::remove(path);
}

void indexSeeds() {
  const fs::path path = g_out / "tmp.nsi";
  const Matrix<float> base = fuzz::indexFuzzBase();
  Context context;
  context.backend = Backend::Cpu;
  context.threads = 1;
  for (const char* kind : {"graph", "ivf"})
    for (Metric metric : {Metric::L2, Metric::Cosine}) {
      const auto index = buildIndex(base.view(), metric, parseIndexBuildParams(kind, {}), context);
      index->save(path, "");
      put("index_file", std::string(kind) + "-" + std::string(metricName(metric)), slurp(path));
    }
  fs::remove(path);
}

void cacheSeeds() {
  const fs::path folder = g_out / "tmp-cache";
  const Dataset data = fuzz::cacheFuzzData();
  const ArtefactCache cache(folder, 1 << 20);
  KnnResult r;
  r.ids =
      Matrix<std::int32_t>(std::vector<std::int32_t>{1, 2, 0, 2, 3, 1, 2, 4, 5, 3, 4, -1}, 6, 2);
  std::vector<float> d(12);
  for (std::size_t i = 0; i < d.size(); ++i)
    d[i] = float(i % 2) + 0.5f;
  r.distances = Matrix<float>(d, 6, 2);
  cache.storeGraph(data, Metric::L2, fuzz::kCacheGraphParams, r);
  const std::vector<float> map = values(12);
  cache.storeMatrix(data, fuzz::kCacheMapWhat, fuzz::kCacheMapParams,
                    MatrixView<float>{map.data(), 6, 2});
  for (const auto& e : fs::directory_iterator(folder)) {
    const bool graph = e.path().extension() == ".nsgraph";
    put("cache_entry", graph ? "graph" : "map",
        std::string(1, graph ? '\0' : '\1') + slurp(e.path()));
  }
  fs::remove_all(folder);
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_make_seeds OUT_FOLDER\n";
    return 2;
  }
  g_out = argv[1];
  fs::remove_all(g_out);
  fs::create_directories(g_out);
  npySeeds();
  vecsSeeds();
  tsvSeeds();
  studySeeds();
  regexSeeds();
  sessionSeeds();
  idxSeeds();
  hdf5Seeds();
  graphSeeds();
  indexSeeds();
  cacheSeeds();
  std::cout << "seed corpora written to " << g_out << "\n";
  return 0;
}
