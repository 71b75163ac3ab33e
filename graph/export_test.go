package graph

// RaceOn says the tests run with the race detector, for the external
// tests whose allocation counts sync.Pool makes vary under it.
const RaceOn = raceOn
