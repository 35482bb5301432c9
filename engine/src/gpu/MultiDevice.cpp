#include "gpu/MultiDevice.h"

#include "nearscape/core/Error.h"

#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace nearscape::gpu {

std::vector<int> spreadDevices(const Context& context) {
  if (context.devices.size() < 2 || resolveBackend(context) != Backend::Cuda)
    return {};
  return context.devices;
}

Context onDevice(const Context& context, int ordinal) {
  Context one = context;
  one.device = ordinal;
  one.devices.clear();
  return one;
}

void onEachDevice(const std::vector<int>& devices, const Context& context, JobControl& job,
                  const std::function<void(int, const Context&, JobControl&)>& work) {
  runParts(devices.size(), job, [&](int part, JobControl& partJob) {
    work(part, onDevice(context, devices[std::size_t(part)]), partJob);
  });
}

void runParts(std::size_t parts, JobControl& job,
              const std::function<void(int, JobControl&)>& work) {
  std::mutex mutex; // guards `fractions`, `failures` and the calls to job.progress
  std::vector<double> fractions(parts, 0.0);
  std::vector<std::exception_ptr> failures(parts);
  JobControl group(job, nullptr); // stops with `job`, or when a part fails
  std::vector<std::unique_ptr<JobControl>> partJobs;
  for (std::size_t p = 0; p < parts; ++p)
    partJobs.push_back(std::make_unique<JobControl>(
        group,
        [&, p](double fraction, const std::string& message) {
          const std::lock_guard lock(mutex);
          fractions[p] = fraction;
          double sum = 0;
          for (double f : fractions)
            sum += f;
          job.progress(sum / double(parts), message);
        },
        std::chrono::milliseconds(0)));
  std::vector<std::jthread> threads; // joined on any exit, a failed start included
  threads.reserve(parts);
  for (std::size_t p = 0; p < parts; ++p)
    try {
      threads.emplace_back([&, p] {
        try {
          work(int(p), *partJobs[p]);
        } catch (...) {
          const std::lock_guard lock(mutex);
          failures[p] = std::current_exception();
          group.requestStop();
        }
      });
    } catch (...) { // no thread for this part: the others stop, and are joined as `threads` goes
      group.requestStop();
      throw;
    }
  for (std::jthread& t : threads)
    t.join();
  // The failure that stopped the others, not the Cancelled they answered it with.
  std::exception_ptr cancelled;
  for (const std::exception_ptr& failure : failures) {
    if (!failure)
      continue;
    try {
      std::rethrow_exception(failure);
    } catch (const Cancelled&) {
      cancelled = cancelled ? cancelled : failure;
      continue;
    } catch (...) {
    }
    std::rethrow_exception(failure);
  }
  if (cancelled)
    std::rethrow_exception(cancelled);
  job.check();
}

} // namespace nearscape::gpu
