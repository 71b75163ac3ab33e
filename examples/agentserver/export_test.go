package agentserver

// MaxDemoChunks is maxDemoChunks, for the tests of package agentserver_test.
const MaxDemoChunks = maxDemoChunks
