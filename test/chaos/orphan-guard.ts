// Loaded into every service instance of a fault run (`node --import`): when the run that started
// it is gone (killed outright, so no exit hook of its ran), the instance ends itself rather than
// write to a cluster that is gone too. The service's own code is untouched.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGKILL');
}, 1000).unref();
