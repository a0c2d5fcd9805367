"""Visitors subscribed by email: the mailbox read, requests answered, updates sent, exactly once.

    mailbox    the messages that arrive (IMAP or a Maildir folder), bounded, each acted on once
    requests   a message as a visitor's request, or as nothing ours (automatic replies, loops)
    bounces    delivery failures reported to the address (flufl.bounce)
    compose    the messages we send: a confirmation, a welcome, a goodbye, an update
    sender     how they leave: SMTP (STARTTLS or TLS), or a folder that keeps them
    outbox     what a run queues for the subscribers, and its delivery
    run        one run's turn: read, answer, send
    online     check-config --online: the mailbox and the mail server answer and take the login

The decisions are ``statusgen.decide.subscribers``; the store keeps the addresses and nothing
else does (``statusgen.store.subscribers``).
"""
