package chatbot

// WaitingTurns counts b's turns waiting for a running slot
// (Config.MaxRunningTurns), for tests that order turns by it.
func WaitingTurns(b *Bot) int {
	if b.running == nil {
		return 0
	}
	return b.running.waiters()
}
