package Cache::Memcached::RustXS::Dict::NodeReader;

use strict;
use warnings;

use IO::Select ();
use IO::Socket::INET ();
use Time::HiRes ();

use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Dict qw(fail unusable);
use Cache::Memcached::RustXS::GetParser ();

our $VERSION = '1.000';

my $MAX_LINE   = 65536;     # longest reply line accepted (keys are <= 250 bytes)
my $READ_SIZE  = 262144;    # bytes asked of each read
our $BUSY_TRIES = 40;       # lru_crawler metadump while the crawler is busy:
our $BUSY_WAIT  = 0.25;     # ... 40 tries, 0.25 s apart
my $DEFAULT_TIMEOUT = 10;
my $FIRST_CHECK = 65536;        # bytes of a get response read before it is first parsed unfinished

# HOST:PORT, [IPv6]:PORT or the path of a unix socket; undef for anything
# else.
sub parse_address {
    my ($class, $spec) = @_;
    return undef unless defined $spec;
    return { spec => $spec, path => $spec } if $spec =~ m{\A/};
    my ($host, $port, $v6);
    if ($spec =~ /\A\[([0-9A-Fa-f:.]+)\]:([0-9]+)\z/) { ($host, $port, $v6) = ($1, $2, 1) }
    elsif ($spec =~ /\A([^\s:\[\]]+):([0-9]+)\z/)    { ($host, $port) = ($1, $2) }
    return undef unless defined $port && $port >= 1 && $port <= 65535;
    return { spec => $spec, host => $host, port => 0 + $port, ipv6 => $v6 };
}

sub connect {
    my ($class, $address, %opt) = @_;
    my $timeout = defined $opt{timeout} ? $opt{timeout} : $DEFAULT_TIMEOUT;
    my $server = ref $address ? $address : $class->parse_address($address)
        or fail("not a memcached address (HOST:PORT, [IPv6]:PORT or /path): '"
                . (defined $address ? $address : '') . "'");
    my $sock;
    if (defined $server->{path}) {
        require IO::Socket::UNIX;
        $sock = IO::Socket::UNIX->new(Peer => $server->{path}, Timeout => $timeout);
    } elsif ($server->{ipv6}) {
        eval { require IO::Socket::IP; 1 }
            or fail("$server->{spec}: IPv6 addresses need the module IO::Socket::IP (part of perl from 5.20)");
        $sock = IO::Socket::IP->new(PeerHost => $server->{host}, PeerPort => $server->{port},
                                    Timeout => $timeout);
    } else {
        $sock = IO::Socket::INET->new(PeerAddr => $server->{host}, PeerPort => $server->{port},
                                      Proto => 'tcp', Timeout => $timeout);
    }
    if (!$sock) {
        my $why = $@ || "$!";
        $why =~ s/\A(?:IO::Socket::\w+: )?(?:connect: )?//;
        $why =~ s/\s+\z//;
        fail("cannot connect to $server->{spec}: $why");
    }
    binmode $sock;
    return bless { sock => $sock, sel => IO::Select->new($sock), buf => '',
                   spec => $server->{spec}, timeout => $timeout }, $class;
}

sub spec    { $_[0]{spec} }
sub timeout { $_[0]{timeout} }

# A server holds the cache: its keys are counted (Dict::Files' are a
# sample).
sub counts_keys { 1 }

sub close {
    my ($self) = @_;
    CORE::close($self->{sock}) if $self->{sock};
    delete @{$self}{qw(sock sel)};
    return;
}

# ---- what it holds -----------------------------------------------------------

# Calls $on_key->($key, $size) for every key `lru_crawler metadump all`
# lists, the key URL-decoded, $size its item size (undef if not listed);
# returns how many.
sub each_key {
    my ($self, $on_key) = @_;
    my $first;
    for my $try (1 .. $BUSY_TRIES) {
        $self->send("lru_crawler metadump all\r\n");
        $first = $self->read_line;
        last unless $first =~ /\ABUSY/;
        fail("the LRU crawler of $self->{spec} stayed busy for "
             . $BUSY_TRIES * $BUSY_WAIT . " s: '$first'") if $try == $BUSY_TRIES;
        Time::HiRes::sleep($BUSY_WAIT);
    }
    unusable("$self->{spec} cannot list its keys: to 'lru_crawler metadump all' it answered '$first' "
             . '(memcached 1.4.31 or later is needed, with its LRU crawler on: not -o no_lru_crawler)')
        unless $first eq 'END' || $first =~ /\Akey=/;
    my $keys = 0;
    for (my $line = $first; $line ne 'END'; $line = $self->read_line) {
        if ($line =~ /\Akey=(\S+)/) {
            my $key = $1;
            my ($size) = $line =~ /\ssize=([0-9]+)/;
            $key =~ s/%([0-9A-Fa-f]{2})/chr hex $1/ge;
            $keys++;
            $on_key->($key, $size);
        } elsif ($line =~ /\A(?:ERROR|CLIENT_ERROR|SERVER_ERROR)/) {
            fail("$self->{spec} stopped listing its keys: '$line'");
        }
    }
    return $keys;
}

# { key => [flags, data] } for the keys the server has of @$keys (at most a
# request's worth: the caller batches), the response read by the
# distribution's parser (GetParser's get_response_items).
sub get_multi {
    my ($self, $keys) = @_;
    $self->send("get @$keys\r\n");
    my $checked = 0;
    for (;;) {
        # The response is parsed when the server pauses after a line end
        # (every response, whole or an error, ends with one), and when the
        # buffer has doubled (a bad one shows by then).
        my $paused = substr($self->{buf}, -1) eq "\n" && !$self->{sel}->can_read(0);
        if ($paused || length $self->{buf} >= 2 * $checked + $FIRST_CHECK) {
            my ($items, $complete) = eval { Cache::Memcached::RustXS::GetParser::get_response_items($self->{buf}) };
            if (!$items) {
                my $why = Cache::Memcached::RustXS::_error_message($@);
                $why =~ s/\Anot a memcached get response: //;
                fail("$self->{spec} answered a get with a bad response: $why");
            }
            if ($complete) {
                $self->{buf} = '';
                return { map { ($_->[0] => [ $_->[1], $_->[2] ]) } @$items };
            }
            $checked = length $self->{buf};
        }
        $self->_fill;
    }
}

# { name => value } of `stats` or `stats $group`.
sub stats {
    my ($self, $group) = @_;
    my $request = defined $group ? "stats $group" : 'stats';
    $self->send("$request\r\n");
    my %stats;
    while ((my $line = $self->read_line) ne 'END') {
        my ($name, $value) = $line =~ /\ASTAT (\S+) ?(.*)\z/
            or fail("$self->{spec} answered '$request' with '" . substr($line, 0, 200) . "'");
        $stats{$name} = $value;
    }
    return \%stats;
}

# `stats settings`, with item_size_max and growth_factor checked to be there.
sub settings {
    my ($self) = @_;
    my $s = $self->stats('settings');
    for my $name (qw(item_size_max growth_factor)) {
        fail("$self->{spec} does not say its $name in 'stats settings'")
            unless defined $s->{$name} && $s->{$name} =~ /\A[0-9]+(?:\.[0-9]+)?\z/;
    }
    return $s;
}

# The server's version, as `version` answers it ("1.6.18"), or undef.
sub version {
    my ($self) = @_;
    $self->send("version\r\n");
    my $line = $self->read_line;
    return $line =~ /\AVERSION (\S+)/ ? $1 : undef;
}

# The slab classes `stats slabs` lists (the ones that hold memory), by
# class number: [ { class => N, chunk_size => BYTES, ... } ], ascending.
sub slab_classes {
    my ($self) = @_;
    my $s = $self->stats('slabs');
    my %class;
    for my $name (keys %$s) {
        next unless $name =~ /\A([0-9]+):(\w+)\z/;
        $class{$1}{$2} = $s->{$name};
    }
    return [ map { +{ class => 0 + $_, %{ $class{$_} } } } sort { $a <=> $b } keys %class ];
}

# The chunk sizes of those classes, ascending.
sub slab_chunk_sizes {
    my ($self) = @_;
    return map { 0 + $_->{chunk_size} } grep { defined $_->{chunk_size} } @{ $self->slab_classes };
}

# ---- the text protocol ---------------------------------------------------------

sub send {
    my ($self, $data) = @_;
    local $SIG{PIPE} = 'IGNORE';
    my $off = 0;
    while ($off < length $data) {
        my $n = syswrite $self->{sock}, $data, length($data) - $off, $off;
        if (!defined $n) {
            next if $!{EINTR};
            fail("writing to $self->{spec}: $!");
        }
        $off += $n;
    }
    return;
}

# One reply line, without its line end.
sub read_line {
    my ($self) = @_;
    my $at;
    while (($at = index $self->{buf}, "\n") < 0) {
        fail("$self->{spec} sent a reply line longer than $MAX_LINE bytes")
            if length $self->{buf} > $MAX_LINE;
        $self->_fill;
    }
    my $line = substr $self->{buf}, 0, $at + 1, '';
    $line =~ s/\r?\n\z//;
    return $line;
}

sub _fill {
    my ($self) = @_;
    $self->{sel}->can_read($self->{timeout})
        or fail("$self->{spec} did not answer for $self->{timeout} s (--timeout)");
    my $n = sysread $self->{sock}, $self->{buf}, $READ_SIZE, length $self->{buf};
    if (!defined $n) {
        return if $!{EINTR};
        fail("reading from $self->{spec}: $!");
    }
    fail("$self->{spec} closed the connection") unless $n;
    return;
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::NodeReader - one read-only connection to a memcached server, for cmrx-dict

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::NodeReader;

    my $server = Cache::Memcached::RustXS::Dict::NodeReader->connect('127.0.0.1:11211', timeout => 10);

    my %size_of;
    my $count = $server->each_key(sub { my ($key, $size) = @_; $size_of{$key} = $size });
    my @first = grep { defined } (sort keys %size_of)[0 .. 9];
    my $got = @first ? $server->get_multi(\@first) : {};     # { key => [flags, data] }

    my $settings = $server->settings;          # `stats settings`
    print "items up to $settings->{item_size_max} bytes, ",
          "slab classes growing by $settings->{growth_factor}\n";
    my @chunks = $server->slab_chunk_sizes;    # of the classes in use (`stats slabs`)
    $server->close;

=head1 DESCRIPTION

The memcached client of L<cmrx-dict>: one connection, the text protocol,
and only commands that read (C<lru_crawler metadump all>, C<get>,
C<stats>). It never writes to the server. Every read waits at most the
timeout; a reply line is at most 64 KiB; get responses are read by the
distribution's strict parser.
Errors die with L<Cache::Memcached::RustXS::Dict/fail($message)>
(C<unusable> for a server that cannot list its keys), one line saying
which server and what went wrong.

=head1 METHODS

=over 4

=item Cache::Memcached::RustXS::Dict::NodeReader->parse_address($spec)

C<HOST:PORT>, C<[IPv6]:PORT> or the path of a unix socket (C</...>) as
C<< { spec, host, port, ipv6 } >> or C<< { spec, path } >>; C<undef> for
anything else (a port outside 1 to 65535 included).

=item Cache::Memcached::RustXS::Dict::NodeReader->connect($address, timeout => 10)

Connects to C<$address> (a string, or what C<parse_address> returns),
waiting at most C<timeout> seconds (the default is 10), which then bounds
every read too. IPv6 addresses need IO::Socket::IP (part of perl from
5.20).

=item spec, timeout

The address as given, and the timeout.

=item counts_keys

True: the keys a server lists are the cache's, so the tuner weighs a
dictionary's bytes against them (files of values,
L<Cache::Memcached::RustXS::Dict::Files>, are a sample and do not).

=item each_key(sub { my ($key, $size) = @_ })

Sends C<lru_crawler metadump all> (memcached 1.4.31 or later, its LRU
crawler on) and calls the function for every key listed, URL-decoded, with
its item size (C<undef> if the line has none), in the order the server
lists them (its LRU order). Returns the number of keys. While the crawler
is busy (C<BUSY>) it tries again, for 10 s at most
(C<$Cache::Memcached::RustXS::Dict::NodeReader::BUSY_TRIES>, 40 tries,
C<$Cache::Memcached::RustXS::Dict::NodeReader::BUSY_WAIT>, 0.25 s apart). A
server that answers anything else than a listing is C<unusable>.

=item get_multi(\@keys)

One C<get> of the keys (the caller keeps a request reasonably small:
cmrx-dict sends 100 keys at a time): C<< { key => [ $flags, $data ] } >>
for the keys the server has, the data as stored. The response is read by
the distribution's strict parser
(L<Cache::Memcached::RustXS::GetParser/get_response_items($response)>):
an error line, a malformed line or value fails, naming the server and
the parser's reason.

=item stats($group)

C<stats> (C<$group> undef) or C<stats $group>, as C<< { name => value } >>.

=item settings

C<stats settings>, checked to state C<item_size_max> (the largest item, in
bytes) and C<growth_factor> (by how much each slab class's chunk size
grows over the one before: C<-f>).

=item version

The server's version as C<version> answers it (C<1.6.18>), or C<undef>.

=item slab_classes

The slab classes of C<stats slabs> (those that hold memory), ascending:
C<< [ { class => 1, chunk_size => 96, chunks_per_page => ..., ... } ] >>,
every C<N:name> statistic of class C<N> under C<name>.

=item slab_chunk_sizes

The chunk sizes of those classes, ascending: an item takes the smallest
chunk that holds it.

=item close

Closes the connection.

=item send($bytes), read_line

The protocol underneath: send a request whole; read one reply line
(without its line end) of the replies that are not get responses
(C<lru_crawler metadump>, C<stats>).

=back

=head1 SEE ALSO

L<cmrx-dict>, L<Cache::Memcached::RustXS::Dict::Sample>, memcached's
F<protocol.txt>.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut
