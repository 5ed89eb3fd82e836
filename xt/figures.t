#!/usr/bin/perl
# Every figure a document quotes is the figure of one row of one named run,
# and the check knows which: xt/figures.ledger ties each figure that
# README.md, CONTRIBUTING.md, bin/cmrx-dict, the POD of lib/ and the prose
# of bench/README.md quote to a run (a table, a block or a paragraph that a
# "<!-- run: NAME -->" line names, in bench/README.md or CONTRIBUTING.md)
# and to the row of that run it comes from; the check reads that row and
# fails when it does not hold the figure (the same number and unit, or the
# row's number rounded to the figure's decimals), when a document quotes a
# figure the ledger does not tie (a changed figure is a new one), and when
# the ledger names a run or a row that is not there. The rule of what a
# figure is, and what is not one, is at figures() below; xt/README.md says
# how to see it fail. Settings and limits (%SETTING) are facts of
# configuration, not measurements; a figure in a sentence that names the
# t/ test computing it is that test's.
use strict;
use warnings;
use utf8;

use lib 't/lib';
use Encode ();
use File::Find ();
use Test::More;
use CMRXTest::Peers qw(slurp);

binmode Test::More->builder->$_, ':encoding(UTF-8)' for qw(output failure_output todo_output);

# Settings, limits and defaults the documents state, which no benchmark
# measures: each with what it is.
my %SETTING = (
    '64 MiB'  => 'the decompression cap, $MaxOutput, by default; the memory model\'s -m',
    '1 MiB'   => 'memcached\'s item size and slab page size by default; the parser\'s first buffer',
    '1 GiB'   => 'the largest item memcached allows (-I)',
    '4 GiB'   => 'the gzip trailer\'s size field wraps at 2**32',
    '2 KiB'   => 'the longest reply line the parser buffers; the smallest dictionary the tuner tries',
    '64 KiB'  => 'the parser\'s read buffer; a reply line\'s limit for cmrx-dict\'s server reader; the smallest growth-loop buffer',
    '512 KiB' => 'memcached\'s slab_chunk_max by default',
    '110 KiB' => 'the tuner\'s largest dictionary (max_size) by default',
    '16 KiB'  => 'the benchmark\'s dictionary size',
    '20 %'    => 'the saving Cache::Memcached\'s compression must reach (COMPRESS_SAVINGS)',
    '5 ms'    => 'the length of one of cmrx-dict\'s timing rounds',
    '10,000'  => 'the interval, in keys, of cmrx-dict\'s sampling progress',
    '14 KB'   => 'an example item size in Dict::SlabModel\'s POD',
    '0.1 %'   => 'the margin within which the advisor calls settings equal',
    '33 %'    => 'an example of Dict::Report\'s percentage format',
    '0 %'     => 'an example of cmrx-dict report\'s output',
    '4 KiB'   => 'the dictionary size in cmrx-dict\'s example output',
    '128 KiB' => 'the size from which Zlib\'s compress_methods samples a value first',
    '60 s'    => 'the rescan interval by default',
    '5 %'     => 'the saving a dictionary must reach over the best codec without one (Dict::Tune\'s worth_a_dictionary)',
    '1 %'     => 'the gain from which the settings advisor advises a change; the margin of an equal output size',
    '2 x'     => 'a multiple, not a ratio (the 2 x $every-th item)',
    '100 x'   => 'zstd\'s advice: samples of about 100 times the dictionary size',
    '512 KB'  => 'memcached\'s slab_chunk_max by default',
    '3600 s'  => 'an example duration (an hour)',
    '50 ms'   => 'how often bench/node-scale.pl samples a process tree\'s memory',
    '7 KB'    => 'the largest JSON values of the corpus (100 B to 7 KB)',
    '10 x'    => 'the divisor of the share of item bytes a prefix holds to be tuned past --max-prefixes: 1/(10 x max)',
    '10 s'    => 'the lru_crawler reader\'s timeout',
    '0.25 s'  => 'the lru_crawler reader\'s wait between tries',
    '3 s'     => 'an example of a duration\'s format',
    '1 s'     => 'an example duration',
    # The benchmark's shapes and scales: what it measures, not what it found.
    '9 KB'    => 'the benchmark\'s JSON value (t/data/seed.json)',
    '300 KB'  => 'the benchmark\'s document (perldiag.pod)',
    '300 B'   => 'a benchmark shape',
    '100 B'   => 'a benchmark shape; the corpus\'s smallest values',
    '1 KB'    => 'a benchmark shape',
    '1 MB'    => 'a benchmark shape',
    '10 KB'   => 'the corpus\'s largest values',
    '30 KB'   => 'the benchmark\'s JPEG',
    '64 MB'   => 'the memory benchmark\'s memcached (-m 64)',
    '32 MB'   => 'bench/hitrate.pl\'s memcached by default',
    '16 MB'   => 'a smaller memcached of the benchmarks',
    '8 MB'    => 'bench/app.pl\'s memory-bound memcached',
    '300,000' => 'bench/hitrate.pl\'s keys by default',
    '600,000' => 'bench/hitrate.pl\'s gets counted by default',
    '1,000'   => 'a per-1,000 unit; cmrx-dict\'s default sample',
    '60,000'  => 'bench/hitrate.pl\'s keys with --quick',
    '100,000' => 'bench/hitrate.pl\'s gets with --quick; the leak soak\'s cycles',
    '30,000'  => 'bench/app.pl\'s keys by default',
    '3,090'   => 'the keys of the tuner-stability run shown (gh, npm and compat, 10 copies)',
    '2.85 x'  => 'bench/memory.pl\'s bar for the set\'s items',
    '2 s'     => 'a duration of bench/app.pl --quick',
    '8 s'     => 'a duration of bench/app.pl and xt/faults-under-load.t by default',
    '0.6 x'   => 'the bar of bench/hitrate.pl and bench/app.pl for the set\'s fetches',
    '24 GB'   => 'the reference machine\'s memory',
    # A setting of one document only ("PATH: FIGURE").
    'lib/Cache/Memcached/RustXS/Zlib.pm: 3 %' => 'the saving below which Zlib\'s compressor stores a large value raw',
    'lib/Cache/Memcached/RustXS/Dict/Report.pm: 42 s' => 'an example of a duration\'s format',
    'lib/Cache/Memcached/RustXS/Operations.pod: 3 %' => 'arithmetic: CAS\'s 8 bytes of an item of 260 bytes',
);

my $UNIT = qr/KiB|MiB|GiB|KB|MB|GB|kB|B|µs|us|ms|ns|s|%|x|×|times/;
my $NUM  = qr/\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?/;
my $JOIN = qr/\s*(?:to|and|or|-|–|\/)\s*/;

# The figures of a text, in order, as "NUMBER UNIT" (or "NUMBER" for a
# count with thousands separators): a number with a unit (x, × and "times"
# are one unit, us is µs), every number of a range that ends in a unit
# ("2.0 to 2.2x", "0.36 - 0.43 %"), and a count with separators (213,807).
# Not figures: a count times a size (100 x 1 KB), numbers inside words,
# versions and code.
sub figures {
    my ($text) = @_;
    my @found;    # [offset, figure]
    while ($text =~ /(?<![\w.\/:\-])($NUM)((?:$JOIN$NUM(?:\s?(?:$UNIT)(?![\w]))?)*)\s?($UNIT)(?![\w])/g) {
        my ($first, $rest, $unit, $at) = ($1, $2, $3, $-[0]);
        next if $unit =~ /^(?:x|×)$/ && substr($text, pos $text) =~ /^ ?\d/;    # 100 x 1 KB
        next if substr($text, 0, $at) =~ /\d ?[x×] ?\z/;                          # its 1 KB
        $unit = 'x'  if $unit =~ /^(?:×|times)$/;
        $unit = 'µs' if $unit eq 'us';
        my @numbers = ($first, $rest =~ /($NUM)/g);
        push @found, map { [ $at, "$_ $unit" ] } @numbers;
    }
    while ($text =~ /(?<![\w.,])(\d{1,3}(?:,\d{3})+)(?![\d,])(?!\s?(?:$UNIT)(?![\w]))/g) {
        push @found, [ $-[0], $1 ];
    }
    return map { $_->[1] } sort { $a->[0] <=> $b->[0] } @found;
}

# A document's text as [line number, text] pieces: a paragraph of prose
# joined into one piece (a figure may be split across lines), each line of
# a table or of verbatim text its own. For a Perl file, its POD only; the
# POD's escapes E<gt> and E<lt> are blanked. The verbatim lines of
# cmrx-dict.pod's EXAMPLES are what its commands print (t/25 runs them),
# not quoted figures, and are left out; so is what a run of a markdown
# document holds (runs() reads it).
sub pieces {
    my ($path, $text) = @_;
    my $head1 = '';
    my $pod = $path =~ /\.(?:pm|pl|pod)\z/ || $path =~ m{\Abin/};
    my (undef, $in_run) = $pod ? (undef, {}) : runs($path, $text);
    my ($in_pod, $in_fence, $n, @pieces, $open) = ($pod ? 0 : 1, 0, 0);
    for my $line (split /\n/, $text) {
        $n++;
        if ($in_run->{$n}) { undef $open; next }
        $in_pod = 1 if $pod && $line =~ /^=[a-zA-Z]/;
        if (!$in_pod) { undef $open; next }
        $in_pod = 0 if $pod && $line =~ /^=cut\b/;
        $head1 = $1 if $pod && $line =~ /^=head1\s+(.*)/;
        next if $path =~ m{cmrx-dict\.pod\z} && $head1 eq 'EXAMPLES' && $line =~ /^\s/;
        (my $plain = $line) =~ s/E<(?:gt|lt)>/ /g;
        if ($line =~ /^\s*```/) {
            $in_fence = !$in_fence;
            undef $open;
            next;
        }
        if ($plain !~ /\S/) {
            undef $open;
            next;
        }
        if ($in_fence || $plain =~ /^(?:\s{4}|\s*\|)/ && !$pod || $pod && $plain =~ /^\s/) {
            undef $open;
            push @pieces, [ $n, $plain ];
            next;
        }
        if ($open) { $open->[1] .= " $plain" } else { push @pieces, $open = [ $n, $plain ] }
    }
    return @pieces;
}

# The named runs of a markdown document: each "<!-- run: NAME -->" line
# names what follows it (blank lines aside): a fenced block, an indented
# block, a table, or a paragraph. Returns { NAME => [rows] }, a row being
# { line, text, section }: a line of a block or a table (section: the last
# "== ... ==" line of a block before it), a sentence of a paragraph; in
# list context also { LINE NUMBER => 1 } of the lines the runs take.
sub runs {
    my ($path, $text) = @_;
    my (%runs, %lines, $name, $kind, $section, @para, $para_line);
    my $n = 0;
    my $end_paragraph = sub {
        return unless @para;
        my $joined = join ' ', @para;
        push @{ $runs{$name} }, map { { line => $para_line, text => $_, section => '' } }
            split /(?<=[.;:])\s+(?=\S)/, $joined;
        @para = ();
        undef $name;
    };
    for my $line (split /\n/, $text) {
        $n++;
        if ($line =~ /^\s*<!-- run: (\S+) -->\s*$/) {
            die "$path:$n: run $1 named twice\n" if $runs{$1};
            ($name, $kind, $section) = ($1, undef, '');
            $runs{$name} = [];
            $lines{$n} = 1;
            next;
        }
        next unless defined $name;
        $lines{$n} = 1;
        if (!defined $kind) {
            next if $line !~ /\S/;
            $kind = $line =~ /^\s*```/ ? 'fence' : $line =~ /^\s*\|/ ? 'table' : $line =~ /^ {4}/ ? 'indented' : 'paragraph';
            next if $kind eq 'fence';
            $para_line = $n;
        }
        if ($kind eq 'fence') {
            if ($line =~ /^\s*```/) { undef $name; next }
        }
        elsif ($kind eq 'table') {
            if ($line !~ /^\s*\|/) { undef $name; delete $lines{$n}; next }
            next if $line =~ /^\s*\|[-:| ]+\|\s*$/;
        }
        elsif ($kind eq 'indented') {
            if ($line !~ /^ {4}|^\s*$/) { undef $name; delete $lines{$n}; next }
        }
        else {
            if ($line !~ /\S/) { $end_paragraph->(); next }
            (my $trimmed = $line) =~ s/^\s+//;
            push @para, $trimmed;
            next;
        }
        next if $line !~ /\S/;
        $section = $1 if $line =~ /^\s*==\s*(.*?)\s*==\s*$/;
        push @{ $runs{$name} }, { line => $n, text => $line, section => $section };
    }
    $end_paragraph->() if defined $name;
    return wantarray ? (\%runs, \%lines) : \%runs;
}

# The ledger: [document, figure, run, row, line] for each line
# "DOCUMENT | FIGURE | RUN | ROW" (blank lines and # comments aside).
sub read_ledger {
    my ($text) = @_;
    my (@entries, $n);
    for my $line (split /\n/, $text) {
        $n++;
        next if $line =~ /^\s*(?:#|$)/;
        my @fields = split /\|/, $line, 4;
        s/^\s+|\s+$//g for @fields;
        die "figure ledger line $n: not DOCUMENT | FIGURE | RUN | ROW\n" unless @fields == 4 && !grep { $_ eq '' } @fields;
        push @entries, [ @fields, $n ];
    }
    return @entries;
}

# Whether the figure $quoted is $measured, or $measured rounded to as many
# decimals as $quoted has: the same unit, and the number within half a unit
# of its last decimal.
sub same_figure {
    my ($quoted, $measured) = @_;
    my ($qn, $qu) = $quoted =~ /\A(\S+)(?: (.+))?\z/;
    my ($mn, $mu) = $measured =~ /\A(\S+)(?: (.+))?\z/;
    return 0 unless ($qu // '') eq ($mu // '');
    return 1 if $qn eq $mn;
    s/,//g for $qn, $mn;
    my $decimals = $qn =~ /\.(\d+)\z/ ? length $1 : 0;
    return abs($qn - $mn) <= 0.5 * 10**-$decimals + 1e-9 && length($mn) > length($qn);
}

# The row of $rows that the selector "SECTION > START" or "START" names:
# the one row that starts with START (leading blanks and a table's "|"
# aside), in the section of a block whose "== ... ==" line is SECTION.
# Returns the row, or undef and why.
sub find_row {
    my ($rows, $selector) = @_;
    my ($section, $want) = $selector =~ /\A(.*?)\s+>\s+(.*)\z/ ? ($1, $2) : (undef, $selector);
    my @in_section = grep { !defined $section || $_->{section} eq $section } @$rows;
    my @starting = grep { (my $text = $_->{text}) =~ s/\A[\s|]+//; index($text, $want) == 0 } @in_section;
    # A block's row whose label (what comes before two blanks) is START
    # itself comes before the rows it only starts.
    my @labelled = grep { $_->{text} =~ /\A[\s|]*\Q$want\E(?:\s{2,}|\s*\||\s*\z)/ } @starting;
    my @rows = @labelled == 1 ? @labelled : @starting;
    return (undef, "no row starts with \"$selector\"") unless @rows;
    return (undef, scalar(@rows) . " rows start with \"$selector\" (lines " . join(', ', map { $_->{line} } @rows) . ')')
        if @rows > 1;
    return $rows[0];
}

# The problems of the documents against the ledger and the runs: every
# figure a document quotes (%$docs: path => text, $figures_of: path => the
# figures it quotes, in order) has its ledger line, in the same order, and
# the row that line names holds that figure. Returns the problems, as text.
sub problems {
    my (%arg) = @_;
    my ($runs, $ledger, $quoted) = @arg{qw(runs ledger quoted)};
    my @problems;
    my %entries;
    for my $entry (@$ledger) {
        my ($doc, $figure, $run, $selector, $n) = @$entry;
        push @{ $entries{$doc} }, $entry;
        if (!$runs->{$run}) {
            push @problems, "ledger line $n: $doc, $figure: no run named $run";
            next;
        }
        my ($row, $why) = find_row($runs->{$run}, $selector);
        if (!$row) {
            push @problems, "ledger line $n: $doc, $figure: run $run: $why";
            next;
        }
        next if grep { same_figure($figure, $_) } figures($row->{text});
        # A block's column may give the unit once, in its heading (KiB):
        # a bare number of the row then stands for the figure.
        # So may a paragraph's, giving it once for several ("at 0.87, 0.89
        # and 0.93"). Not a table's: its cells carry their units.
        my ($number) = $figure =~ /\A(\S+)/;
        next if $row->{text} !~ /^\s*\|/ && $row->{text} =~ /(?<![\w.,])\Q$number\E(?![\w%×]|[.,]\d)/;
        push @problems, "ledger line $n: $doc, $figure: run $run, the row \"$selector\" (line $row->{line}) does not hold it: "
            . join(', ', figures($row->{text}));
    }
    for my $doc (sort keys %$quoted) {
        my @said = map { $_->[1] } @{ $entries{$doc} || [] };
        my @found = @{ $quoted->{$doc} };
        my %count;
        $count{ $_->[1] }++ for @found;
        $count{$_}-- for @said;
        for my $figure (sort grep { $count{$_} } keys %count) {
            my @lines = map { $_->[0] } grep { $_->[1] eq $figure } @found;
            push @problems, $count{$figure} > 0
                ? "$doc quotes $figure (lines @lines) $count{$figure} time(s) more than the ledger ties to a run"
                : @lines ? "$doc quotes $figure (lines @lines) " . -$count{$figure} . ' time(s) fewer than the ledger says'
                :          "$doc does not quote $figure, which the ledger ties to a run";
        }
    }
    for my $doc (sort grep { !$quoted->{$_} } keys %entries) {
        push @problems, "the ledger names $doc, which is not a document read here";
    }
    return @problems;
}

# A piece's sentences (a verbatim line is one).
sub sentences { split /(?<=[.!?])\s+(?=[A-Z])/, $_[0] }

# A figure in a sentence that names the test computing it (t/NN-name.t,
# which must exist) is that test's, not the benchmark's.
sub computed_by_test {
    my ($text) = @_;
    return grep { -f $_ } $text =~ m{\b(x?t/\d\d-[\w-]+\.t)\b}g;
}

# The figures a document quotes, as [line, figure], settings aside.
sub quoted_figures {
    my ($path, $text) = @_;
    my @quoted;
    for my $piece (pieces($path, $text)) {
        (my $prose = $piece->[1]) =~ s/C<<+\s.*?\s>>+|C<[^<>]*>|`[^`]*`/ /g;    # code is not a figure
        for my $sentence (sentences($prose)) {
            next if computed_by_test($sentence);
            push @quoted, map { [ $piece->[0], $_ ] } grep { !$SETTING{$_} && !$SETTING{"$path: $_"} } figures($sentence);
        }
    }
    return @quoted;
}

my $LEDGER    = 'xt/figures.ledger';
my @RUN_HOMES = ('bench/README.md', 'CONTRIBUTING.md');
my @pod;
File::Find::find({ no_chdir => 1, wanted => sub { push @pod, $File::Find::name if /\.(?:pm|pod)\z/ } }, 'lib');
my @DOCUMENTS = ('README.md', 'CONTRIBUTING.md', 'bench/README.md', 'bin/cmrx-dict', sort @pod);

# The problems of these texts (path => text: the documents, the run homes
# and the ledger).
sub check {
    my (%text) = @_;
    my %runs;
    for my $home (@RUN_HOMES) {
        my $runs = runs($home, $text{$home});
        for my $name (keys %$runs) {
            die "run $name is named in two places\n" if $runs{$name};
            $runs{$name} = $runs->{$name};
        }
    }
    my %quoted = map { ($_ => [ quoted_figures($_, $text{$_}) ]) } @DOCUMENTS;
    return problems(runs => \%runs, ledger => [ read_ledger($text{$LEDGER}) ], quoted => \%quoted);
}

my %text = map { ($_ => Encode::decode('UTF-8', slurp($_))) } @DOCUMENTS, $LEDGER;

my @problems = check(%text);
is scalar(@problems), 0, 'every figure the documents quote is the figure of the row of the run the ledger names'
    or diag join "\n", @problems;

# The check fails on what it is for: each change planted into a copy of
# the texts, the documents and the ledger left as they are otherwise.
my $README_281 = qr/^README\.md \| 2\.81 x \| run\.pl-2026-11-30 \| [^\n]*$/m;
my @PLANTED = (
    [ "README's 2.81x becomes 2.82x",           'README.md', '**2.81x**', '**2.82x**' ],
    [ 'README\'s "214,895 (2.24x)" becomes "216,906 (2.26x)"', 'README.md', '214,895 (2.24x)', '216,906 (2.26x)' ],
    [ "Zlib.pm's 1.89x becomes 1.27x",          'lib/Cache/Memcached/RustXS/Zlib.pm', '1.89x', '1.27x' ],
    [ 'the run of README\'s 2.81x named wrongly (the memory run)', $LEDGER, $README_281,
      'README.md | 2.81 x | memory-ids-2026-12-04 | the set, a Fast object per prefix' ],
    [ 'the row of README\'s 2.81x named wrongly (a row of the same run with 2.82x)', $LEDGER, $README_281,
      'README.md | 2.81 x | run.pl-2026-11-30 | Cache::Memcached parser, parse-only (socketpair; on_item is Cache::Memcached\'s finalize) > 100x1KB' ],
    [ "a run's row changed in bench/README.md and not where it is quoted", 'bench/README.md',
      'get_multi 100 compressed JSON       2.22 ms   788 µs            2.81×', 'get_multi 100 compressed JSON       2.22 ms   790 µs            2.79×' ],
);
for my $plant (@PLANTED) {
    my ($what, $file, $from, $to) = @$plant;
    my %copy = %text;
    my $done = ref $from ? $copy{$file} =~ s/$from/$to/ : $copy{$file} =~ s/\Q$from\E/$to/;
    ok $done, "planted: $what (in a copy of $file)";
    my @found = check(%copy);
    ok @found > 0, "... and the check fails" . (@found ? ": $found[0]" : '');
}

done_testing;
