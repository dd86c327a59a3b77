// SPDX-License-Identifier: Apache-2.0
#include "sim/report/timeline.h"

#include <fmt/format.h>

#include <map>
#include <string>

#include "base/error.h"
#include "sim/report/gzip_file.h"
#include "sim/report/rank_list.h"

namespace tessera::sim::report {

namespace {

std::string category(const Span& s) {
  if (s.kind == graph::NodeKind::kCompute) {
    return std::string(graph::op_class_name(s.op));
  }
  return fmt::format("{}_comm", graph::group_kind_name(s.group));
}

// Spans and memory samples by the simulated rank they came from, in recording order.
struct BySource {
  std::map<std::int32_t, std::vector<const Span*>> spans;
  std::map<std::int32_t, std::vector<const MemorySample*>> memory;
};

BySource by_source(const RunStats& r) {
  BySource b;
  for (const Span& s : r.spans) {
    b.spans[s.rank].push_back(&s);
  }
  for (const MemorySample& m : r.memory) {
    b.memory[m.rank].push_back(&m);
  }
  return b;
}

std::string process_name(const TimelineRank& t) {
  return t.rank == t.source ? fmt::format("rank {}", t.rank)
                            : fmt::format("rank {} (simulated as rank {})", t.rank, t.source);
}

void write_metadata(GzipFile& out, const TimelineRank& t) {
  out.write(
      fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"{}"}}}},)"
                  R"({{"name":"process_sort_index","ph":"M","pid":{},"args":{{"sort_index":{}}}}})",
                  t.rank, process_name(t), t.rank, t.rank));
  for (int st = 0; st < graph::kNumStreams; ++st) {
    out.write(
        fmt::format(",\n"
                    R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"{}"}}}})",
                    t.rank, st, graph::stream_name(static_cast<graph::Stream>(st))));
  }
}

// A collective's algorithm and protocol, as extra span arguments.
std::string collective_args(const Span& s) {
  return s.algorithm.empty()
             ? std::string()
             : fmt::format(R"(,"algorithm":"{}","protocol":"{}")", s.algorithm, s.protocol);
}

void write_spans(GzipFile& out, const graph::ExecGraph& g, std::int32_t pid,
                 const std::vector<const Span*>& spans) {
  for (const Span* s : spans) {
    out.write(fmt::format(
        ",\n"
        R"({{"name":"{}","cat":"{}","ph":"X","pid":{},"tid":{},"ts":{:.3f},"dur":{:.3f},"args":{{"microbatch":{},"bytes":{:.0f},"flops":{:.0f}{}}}}})",
        g.names[s->name], category(*s), pid, static_cast<int>(s->stream), base::to_us(s->start),
        base::to_us(s->end - s->start), s->microbatch, s->bytes, s->flops, collective_args(*s)));
  }
}

void write_memory(GzipFile& out, std::int32_t pid, const std::vector<const MemorySample*>& mem) {
  for (const MemorySample* m : mem) {
    out.write(fmt::format(
        ",\n"
        R"({{"name":"HBM in use","ph":"C","pid":{},"ts":{:.3f},"args":{{"GiB":{:.6f}}}}})",
        pid, base::to_us(m->time), static_cast<double>(m->bytes) / base::kBytesPerGiB));
  }
}

}  // namespace

TimelineWritten write_timeline(const std::string& path, const graph::ExecGraph& g,
                               const RunStats& r) {
  GzipFile out(path);
  out.write("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
  const BySource src = by_source(r);
  static const std::vector<const Span*> kNoSpans;
  static const std::vector<const MemorySample*> kNoMemory;
  bool first = true;
  for (const TimelineRank& t : r.timeline_ranks) {
    if (!first) {
      out.write(",\n");
    }
    first = false;
    write_metadata(out, t);
    auto s = src.spans.find(t.source);
    write_spans(out, g, t.rank, s == src.spans.end() ? kNoSpans : s->second);
    auto m = src.memory.find(t.source);
    write_memory(out, t.rank, m == src.memory.end() ? kNoMemory : m->second);
  }
  out.write("\n]}\n");
  out.close();
  return {out.bytes_in(), out.bytes_out()};
}

std::string timeline_note(const graph::ExecGraph& g, const RunStats& r) {
  if (r.timeline_ranks.empty()) {
    return "";
  }
  std::vector<std::int32_t> shown;
  std::size_t as_other = 0;
  for (const TimelineRank& t : r.timeline_ranks) {
    shown.push_back(t.rank);
    as_other += t.rank != t.source ? 1 : 0;
  }
  std::size_t left = static_cast<std::size_t>(g.num_ranks) - shown.size();
  return fmt::format("timeline shows ranks {} ({} of {}{}){}", format_rank_list(shown),
                     shown.size(), g.num_ranks,
                     as_other > 0 ? fmt::format(", {} by the instance they share", as_other) : "",
                     left > 0 ? fmt::format("; {} {} left out (--timeline-ranks 0,8,16-31 "
                                            "picks others)",
                                            left, left == 1 ? "rank" : "ranks")
                              : "");
}

}  // namespace tessera::sim::report
