package CMRXTest::Clients;

# Test helper: can the memcached clients the tests compare with be used
# here, and a Cache::Memcached made as the tests make it. See the POD at
# the end of the file.

use strict;
use warnings;

use Exporter 'import';

our $VERSION   = '0.01';
our @EXPORT_OK = qw(fast_missing cache_memcached_missing fast_needs_threshold default_parser
                    cache_memcached same_value why_missing);

my ($fast_missing, $cache_memcached_missing);

# '' when Cache::Memcached::Fast loads, else why not (one line).
sub fast_missing {
    return $fast_missing //= why_missing('Cache::Memcached::Fast',
        'Cache::Memcached::Fast is not installed' . ($] < 5.012 ? ' (0.28 needs perl 5.12)' : ''));
}

# '' when Cache::Memcached loads with the pure-Perl parser it ships
# (Cache::Memcached::GetParser), else why not (one line).
sub cache_memcached_missing {
    return $cache_memcached_missing //=
           why_missing('Cache::Memcached', 'Cache::Memcached is not installed')
        || why_missing('Cache::Memcached::GetParser',
               'Cache::Memcached::GetParser (part of Cache::Memcached) is not installed');
}

# True when the Cache::Memcached::Fast here (0.21 to 0.27) reads compressed
# values only if made with compress_threshold (0 or more) or
# compress_methods: its new() installs the default decompressor only then.
sub fast_needs_threshold {
    return !fast_missing() && Cache::Memcached::Fast->VERSION < 0.28;
}

# '' when $module loads, $absent when it is not there, and perl's error
# (its first line) when it is there and fails.
sub why_missing {
    my ($module, $absent) = @_;
    return '' if eval "require $module; 1";
    my ($err) = split /\n/, $@;
    $err =~ s/ \(\@INC contains:.*//;    # the path list says nothing here
    (my $file = "$module.pm") =~ s{::}{/}g;
    return $err =~ /\ACan't locate \Q$file\E /
        ? $absent
        : "$module does not load: $err";
}

# A Cache::Memcached reading with our parser, failing within seconds on a
# server that does not answer; %args are new()'s, and override these.
sub cache_memcached {
    my (%args) = @_;
    require Cache::Memcached;
    return Cache::Memcached->new({
        parser_class => 'Cache::Memcached::RustXS::GetParser',
        connect_timeout => 2, select_timeout => 3, %args,
    });
}

# Whether a client gave back $want: the same string, or for a reference
# one of the same kind with the same canonical Storable image.
sub same_value {
    my ($got, $want) = @_;
    return 0 unless defined $got && ref $got eq ref $want;
    require Storable;
    local $Storable::canonical = 1;
    return ref $want ? Storable::nfreeze($got) eq Storable::nfreeze($want) : $got eq $want;
}

my @default;

# (class, note): the parser_class Cache::Memcached uses when given none, and
# '' -- or, when that is a Cache::Memcached::GetParserXS that cannot parse
# in this perl, the pure-Perl Cache::Memcached::GetParser and why.
sub default_parser {
    return @default if @default;
    die 'default_parser: ' . cache_memcached_missing() . "\n" if cache_memcached_missing();
    my $class = Cache::Memcached->new({ servers => [] })->{parser_class};
    return @default = ($class, '') if $class ne 'Cache::Memcached::GetParserXS';
    # Parse one response in a child perl that loads the module lazily, as
    # perl 5.10.1 does even under PERL_DL_NONLAZY: a build missing symbols
    # then dies at its first parse ("symbol lookup error"), not at load.
    my $code = <<'CHILD';
use Socket qw(AF_UNIX SOCK_STREAM PF_UNSPEC);
use Cache::Memcached::GetParserXS;
socketpair(my $r, my $w, AF_UNIX, SOCK_STREAM, PF_UNSPEC) or die "socketpair: $!";
syswrite $w, "VALUE k 0 1\r\nx\r\nEND\r\n";
close $w;
my %dest;
my $rv = Cache::Memcached::GetParserXS->new(\%dest, 0, sub { })->parse_from_sock($r);
print "parsed rv=$rv k=$dest{k}";
CHILD
    my ($status, $out);
    {
        local $ENV{PERL_DL_NONLAZY};
        delete $ENV{PERL_DL_NONLAZY};
        my @inc = map { "-I$_" } grep { !ref } @INC;
        require CMRXTest::Child;
        ($status, $out) = CMRXTest::Child::run_command([$^X, @inc, '-e', $code], stderr => 'stdout');
    }
    return @default = ($class, '') if $status == 0 && $out =~ /\Aparsed rv=1 k=x\r\n\z/;
    my ($why) = split /\n/, $out;
    return @default = ('Cache::Memcached::GetParser',
        'Cache::Memcached::GetParserXS is installed but cannot parse in this perl ('
        . ($why // "exit status $status") . '): the pure-Perl Cache::Memcached::GetParser stands in');
}

1;

__END__

=head1 NAME

CMRXTest::Clients - whether the clients the tests compare with can be used, and the tests' Cache::Memcached

=head1 SYNOPSIS

    use CMRXTest::Clients qw(fast_missing cache_memcached_missing default_parser);
    SKIP: {
        skip fast_missing(), 3 if fast_missing();
        my $fast = Cache::Memcached::Fast->new({ ... });
        ...
    }
    plan skip_all => cache_memcached_missing() if cache_memcached_missing();
    my ($parser, $note) = default_parser();
    note $note if $note;
    my $memd = Cache::Memcached->new({ ..., parser_class => $parser });

    use CMRXTest::Clients qw(cache_memcached same_value);
    my $ours = cache_memcached(servers => [$addr], namespace => 'ns:');
    ok same_value($ours->get('user'), { id => 7 }), 'read back';

=head1 DESCRIPTION

C<fast_missing> loads L<Cache::Memcached::Fast> once and returns the empty
string when that worked, or a one-line reason to skip with when it did not
(Cache::Memcached::Fast 0.28 needs perl 5.12, so on perl 5.10.1 its cases
skip while everything else in the file runs).

C<cache_memcached_missing> does the same for L<Cache::Memcached> and the
pure-Perl L<Cache::Memcached::GetParser> it ships (and that the tests
compare with). Cache::Memcached::Fast does not need Cache::Memcached, so
hosts with Fast alone are common: code that needs Cache::Memcached (and
C<Cache::Memcached::RustXS::Memcached>, its subclass) loads it at run time,
after asking. Both load the module when it is there, so a test that asked
can call it at once.

C<same_value($got, $want)> is true when a client gave back C<$want>: the
same string, or for a reference one of the same kind whose canonical
L<Storable> image is the same (C<undef> is never the same).

C<why_missing($module, $absent)> loads C<$module> and returns the empty
string when that worked, C<$absent> when it is not installed, and perl's
error (its first line) when it is there and fails to load: the reason to
skip with, for any module.

C<fast_needs_threshold> is true when the Cache::Memcached::Fast loaded is
older than 0.28: those versions install their default decompressor only
when C<compress_threshold> (0 or more) or C<compress_methods> is given, so a
stock reader there must be made with one of them. Without, the first
compressed value it reads dies with "Not a CODE reference" and the
connection is left out of step.

C<default_parser> returns the C<parser_class> that L<Cache::Memcached> picks
when given none (L<Cache::Memcached::GetParserXS> when it loads, else
L<Cache::Memcached::GetParser>) and an empty note. A GetParserXS build that
lacks symbols (its C<inline> functions compiled without an external
definition) fails to load under C<PERL_DL_NONLAZY=1> on most perls, and
Cache::Memcached then falls back by itself; but perl 5.10.1 can load it
lazily anyway, and the first parse kills the process ("symbol lookup
error"). C<default_parser> tries one parse in a child perl; if that fails
it returns the pure-Perl parser, which Cache::Memcached would use without
GetParserXS, and a note saying why.

C<cache_memcached(%args)> makes a L<Cache::Memcached> as the tests make
one: C<parser_class> L<Cache::Memcached::RustXS::GetParser>,
C<connect_timeout> 2 and C<select_timeout> 3 seconds (a server that does
not answer costs seconds, not minutes), and C<%args>, which are C<new>'s
and override these. Ask C<cache_memcached_missing> first.

=cut
