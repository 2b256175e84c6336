package broker

// inFlight returns the model and tool calls in flight over all agents.
func (b *Broker) inFlight() (model, tools int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range b.agents {
		model += a.model
	}
	return model, b.tools
}
