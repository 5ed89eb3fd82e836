package CMRXBench::App;

# The application bench/app.pl serves under Starman: a PSGI app whose every
# request is a read-through of M keys drawn from a Zipf distribution
# (get_multi; each miss "fetched" from a backend of fixed cost and set), the
# JSON values decoded and checked against the values set, and a small page
# rendered from them. One object per configuration (client, parser, codec);
# made before the fork (starman --preload-app) with its client, which
# connects in each worker. Each worker keeps its counters in a file of its own, which
# bench/app.pl reads between its load runs. See bench/README.md
# ("Application").

use strict;
use warnings;
use Time::HiRes ();
use CMRXBench::Memory qw(corpus_halves key_of shuffled_ids zipf_cdf zipf_guide zipf_rank_guided);

our @EXPORT_OK = qw(configurations);
use Exporter 'import';

# The configurations, in the order of the table. client: the module whose
# object the worker makes; parser: Cache::Memcached's parser_class;
# methods: Fast's compress_methods (none: Fast's default gzip); override:
# Compress::Zlib's functions replaced by ours; set: the dictionary set
# written and read, loaded before the fork or (late) in each worker.
my @CONFIGURATIONS = (
    { id => 'cm-perl', client => 'Cache::Memcached', parser => 'Cache::Memcached::GetParser',
      label => 'Cache::Memcached, its parser', stock => 1 },
    { id => 'cm-xs', client => 'Cache::Memcached', parser => 'Cache::Memcached::GetParserXS',
      label => 'Cache::Memcached, GetParserXS', stock => 1 },
    { id => 'cm-ours', client => 'Cache::Memcached', parser => 'Cache::Memcached::RustXS::GetParser',
      label => 'Cache::Memcached, our parser' },
    { id => 'cm-ours-override', client => 'Cache::Memcached', parser => 'Cache::Memcached::RustXS::GetParser',
      override => 1, label => 'Cache::Memcached, our parser + override' },
    { id => 'fast-gzip', client => 'Cache::Memcached::Fast', methods => 'default',
      label => "Fast, its default gzip", stock => 1 },
    { id => 'fast-zlib', client => 'Cache::Memcached::Fast', methods => 'zlib',
      label => 'Fast, our Zlib methods' },
    { id => 'fast-set', client => 'Cache::Memcached::Fast', methods => 'set', set => 'before',
      label => 'Fast, the set, one object' },
    { id => 'cmrx-set', client => 'Cache::Memcached::RustXS::Memcached', set => 'before',
      label => '::Memcached, the set' },
    { id => 'fast-set-late', client => 'Cache::Memcached::Fast', methods => 'set', set => 'after',
      label => 'Fast, the set, loaded in each worker' },
    { id => 'cmrx-set-late', client => 'Cache::Memcached::RustXS::Memcached', set => 'after',
      label => '::Memcached, the set, loaded in each worker' },
);

# A copy of the configurations, each with `missing` set to why it cannot
# run on this host (a module not installed), or undef.
sub configurations {
    return map {
        my %c = %$_;
        my @need = grep { defined } $c{client}, $c{parser},
            ($c{override} || ($c{methods} || '') eq 'zlib' ? 'Cache::Memcached::RustXS::Zlib' : ()),
            ($c{set} ? 'Cache::Memcached::RustXS::Zstd' : ());
        $c{missing} = join ', ', map { "$_ is not installed" } grep { !_loadable($_) } @need;
        $c{missing} = undef unless length $c{missing};
        \%c;
    } @CONFIGURATIONS;
}

sub _loadable { my ($m) = @_; return eval "require $m; 1" ? 1 : 0 }

my $COMPRESS_THRESHOLD = 100;     # every client compresses values of 100 bytes or more
my $FILL_BATCH         = 500;     # keys per set_multi when filling through Fast
my $WRONG_LOGGED       = 5;       # wrong values a worker describes in the error log
my $STATS_RECORD       = 128;     # bytes of a worker's counters file (one line, padded)
my @COUNTERS = qw(requests keys hits fetches wrong undecodable);

# new(config => ID, server => 'host:port', set => DIR, families => [...],
#     keys => N, per_request => M, zipf => S, fetch_ms => MS, seed => N,
#     stats_dir => DIR). Runs before the fork: the corpus, the keys, the
#     Zipf table, the modules, and what the configuration loads up front.
sub new {
    my ($class, %o) = @_;
    my ($config) = grep { $_->{id} eq $o{config} } configurations()
        or die "CMRXBench::App: no configuration $o{config}\n";
    die "CMRXBench::App: $config->{id}: $config->{missing}\n" if $config->{missing};
    my $self = bless { %o, conf => $config, pid => 0 }, $class;

    my (undef, $fill) = corpus_halves(@{ $o{families} });
    my (@key, @value_of, %index, @values);
    for my $id (0 .. $o{keys} - 1) {
        my ($key, $value) = key_of($fill, $o{families}, $id);
        $index{$value} //= do { push @values, $value; $#values };
        push @key, $key;
        push @value_of, $index{$value};
    }
    @$self{qw(key value_of values)} = (\@key, \@value_of, \@values);
    $self->{json} = _json_decoder();
    # What each value decodes to, checked on every read: its kind and size
    # (a string for the values that are not JSON: two HTML pages of gh).
    $self->{shape} = [ map { _shape($self->{json}, $_) } @values ];
    srand($o{seed});
    $self->{rank_id} = shuffled_ids($o{keys});
    $self->{cdf} = zipf_cdf($o{keys}, $o{zipf});
    $self->{guide} = zipf_guide($self->{cdf});    # bench/app.pl checked it against zipf_rank

    eval "require $config->{client}; 1" or die $@;
    eval "require $config->{parser}; 1" or die $@ if $config->{parser};
    if ($config->{override} || ($config->{methods} || '') eq 'zlib') {
        require Cache::Memcached::RustXS::Zlib;
        Cache::Memcached::RustXS::Zlib::override_compress_zlib() if $config->{override};
    }
    require Cache::Memcached::RustXS::Zstd if $config->{set};
    # The client is made here, before the fork, as an app that Starman
    # preloads makes it: neither client connects before its first command,
    # and no command runs before the fork. A set it loads is prepared here
    # too, in pages the workers share copy-on-write. The late
    # configurations make the client, and so load the set, in each worker.
    $self->{client} = $self->_client unless ($config->{set} // '') eq 'after';
    return $self;
}

sub json_backend { return ref $_[0]{json} }

sub _json_decoder {
    for my $m (qw(Cpanel::JSON::XS JSON::XS JSON::PP)) {
        return $m->new->utf8->allow_nonref if eval "require $m; 1";
    }
    die "no JSON decoder\n";
}

sub _shape {
    my ($json, $value) = @_;
    return 'string' unless $value =~ /\A\s*[\[{]/;
    my $data = $json->decode($value);
    return ref $data eq 'HASH' ? 'hash ' . keys %$data : 'array ' . @$data;
}

# ---- each worker ------------------------------------------------------------

# The seed and the counters file of this process (and the client of a late
# configuration), made at its first request, after the fork.
sub _worker {
    my ($self) = @_;
    return if $self->{pid} == $$;
    $self->{pid} = $$;
    srand($self->{seed} + $$);    # not the parent's sequence: each worker draws its own
    $self->{client} ||= $self->_client;
    $self->{count} = { map { ($_ => 0) } @COUNTERS };
    $self->{logged} = 0;
    my $file = "$self->{stats_dir}/$$";
    open my $fh, '+>', $file or die "$file: $!\n";
    $self->{stats_fh} = $fh;
    $self->_write_counters;
    return;
}

sub _client {
    my ($self) = @_;
    my $c = $self->{conf};
    my %args = (servers => [ $self->{server} ], compress_threshold => $COMPRESS_THRESHOLD);
    if ($c->{client} eq 'Cache::Memcached::Fast') {
        $args{compress_methods} =
              $c->{methods} eq 'zlib' ? Cache::Memcached::RustXS::Zlib::compress_methods()
            : $c->{methods} eq 'set'  ? Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $self->{set})
            :                           undef;
        delete $args{compress_methods} unless $args{compress_methods};
        return Cache::Memcached::Fast->new(\%args);
    }
    $args{parser_class} = $c->{parser} if $c->{parser};
    $args{zstd} = { dictionaries => $self->{set} } if $c->{set};
    return $c->{client}->new(\%args);
}

sub _write_counters {
    my ($self) = @_;
    my $line = join(' ', map { "$_=$self->{count}{$_}" } @COUNTERS);
    sysseek $self->{stats_fh}, 0, 0;
    syswrite $self->{stats_fh}, sprintf("%-*s\n", $STATS_RECORD - 1, $line);
    return;
}

# The counters of every worker that served a request: pid => { counter => n }.
sub read_counters {
    my ($class, $dir) = @_;
    my %by_pid;
    opendir my $dh, $dir or die "$dir: $!\n";
    for my $pid (grep { /\A\d+\z/ } readdir $dh) {
        open my $fh, '<', "$dir/$pid" or next;
        my $line = <$fh> // '';
        $by_pid{$pid} = { map { split /=/, $_, 2 } grep { /=/ } split ' ', $line };
    }
    return \%by_pid;
}

# ---- the requests -----------------------------------------------------------

sub to_app {
    my ($self) = @_;
    return sub {
        my ($env) = @_;
        my $path = $env->{PATH_INFO} || '/';
        return [ 200, [ 'Content-Type' => 'text/plain' ], ["ok\n"] ] if $path eq '/ping';
        $self->_worker;
        return $self->_fill($env->{QUERY_STRING} || '') if $path eq '/fill';
        return $self->_page;
    };
}

# M distinct keys drawn from Zipf; get_multi; each miss fetched (one wait
# of the fetch cost per missing key) and set; every value checked against
# the value set, decoded, and the page rendered from it.
sub _page {
    my ($self) = @_;
    my ($cdf, $guide, $rank_id, $key_of) = @$self{qw(cdf guide rank_id key)};
    my $total = $cdf->[-1];
    my (%seen, @ids);
    while (@ids < $self->{per_request}) {
        my $id = $rank_id->[ zipf_rank_guided($cdf, $guide, rand $total) ];
        push @ids, $id unless $seen{$id}++;
    }
    my @keys = map { $key_of->[$_] } @ids;
    my $got = $self->{client}->get_multi(@keys) || {};
    my $count = $self->{count};
    my (@missing, @wrong, @read, @html);
    for my $i (0 .. $#ids) {
        my $expected = $self->{values}[ $self->{value_of}[ $ids[$i] ] ];
        if (!exists $got->{ $keys[$i] }) { push @missing, $i; next }
        my $v = $got->{ $keys[$i] };
        if (!defined $v || $v ne $expected) {
            push @wrong, $keys[$i] . ': ' . (defined $v ? length($v) . ' bytes, not the ' . length($expected) . ' set' : 'undef');
            next;
        }
        $count->{hits}++;
        $read[$i] = $v;
    }
    if (@missing) {
        Time::HiRes::sleep($self->{fetch_ms} / 1000 * @missing);    # the backend: a fixed cost per key
        $read[$_] = $self->{values}[ $self->{value_of}[ $ids[$_] ] ] for @missing;
        $self->_set(map { [ $keys[$_], $read[$_] ] } @missing);
    }
    for my $i (grep { defined $read[$_] } 0 .. $#ids) {
        my $shape = $self->{shape}[ $self->{value_of}[ $ids[$i] ] ];
        my $data = $shape eq 'string' ? $read[$i] : eval { $self->{json}->decode($read[$i]) };
        my $got_shape = !defined $data ? 'undecodable' : !ref $data ? 'string'
                      : ref $data eq 'HASH' ? 'hash ' . keys %$data : 'array ' . @$data;
        if ($got_shape ne $shape) { $count->{undecodable}++; push @wrong, "$keys[$i]: decoded $got_shape, not $shape"; next }
        push @html, '<li>' . _escape($keys[$i]) . ': ' . _title($data) . " ($shape)</li>";
    }
    $count->{requests}++;
    $count->{keys} += @ids;
    $count->{fetches} += @missing;
    $count->{wrong} += @wrong;
    $self->_write_counters;
    if (@wrong) {
        warn "[$$] wrong value: $_\n" for grep { $self->{logged}++ < $WRONG_LOGGED } @wrong;
        return [ 500, [ 'Content-Type' => 'text/plain' ], [ scalar(@wrong) . " wrong values\n" ] ];
    }
    my $body = "<!DOCTYPE html>\n<html><head><title>" . scalar(@ids) . " items</title></head><body><ul>\n"
             . join("\n", @html) . "\n</ul></body></html>\n";
    return [ 200, [ 'Content-Type' => 'text/html; charset=utf-8', 'Content-Length' => length $body ], [$body] ];
}

# The values set: Fast's set_multi (one round trip), Cache::Memcached's set
# one key at a time (it has no set_multi).
sub _set {
    my ($self, @pairs) = @_;
    my $client = $self->{client};
    if ($client->can('set_multi')) { $client->set_multi(@pairs) }
    else                            { $client->set(@$_) for @pairs }
    return;
}

# /fill?from=A&to=B: sets keys A .. B-1 (the hit-bound scale sets every key
# before it measures). Not counted as requests.
sub _fill {
    my ($self, $query) = @_;
    my %q = map { split /=/, $_, 2 } grep { /=/ } split /&/, $query;
    my ($from, $to) = (int($q{from} || 0), int($q{to} || 0));
    $to = $self->{keys} if $to > $self->{keys};
    for (my $at = $from; $at < $to; $at += $FILL_BATCH) {
        my $end = $at + $FILL_BATCH < $to ? $at + $FILL_BATCH : $to;
        $self->_set(map { [ $self->{key}[$_], $self->{values}[ $self->{value_of}[$_] ] ] } $at .. $end - 1);
    }
    return [ 200, [ 'Content-Type' => 'text/plain' ], [ 'filled ' . ($to > $from ? $to - $from : 0) . "\n" ] ];
}

sub _title {
    my ($data) = @_;
    return _escape(substr($data, 0, 40)) unless ref $data;
    my $item = ref $data eq 'ARRAY' ? $data->[0] : $data;
    if (ref $item eq 'HASH') {
        for my $f (qw(name title login full_name id)) {
            return _escape("$item->{$f}") if defined $item->{$f} && !ref $item->{$f};
        }
    }
    return ref $data eq 'HASH' ? 'an object' : 'a list';
}

sub _escape { my $s = shift; $s =~ s/&/&amp;/g; $s =~ s/</&lt;/g; $s =~ s/>/&gt;/g; $s =~ s/"/&quot;/g; $s }

1;
