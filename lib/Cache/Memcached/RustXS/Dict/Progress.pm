package Cache::Memcached::RustXS::Dict::Progress;

use strict;
use warnings;

use Time::HiRes ();

use Cache::Memcached::RustXS::Dict::Report qw(duration_text);

our $VERSION = '1.000';

my $WIDTH = 78;         # a progress line's characters at most
our $EVERY = 10;        # seconds between progress lines where they cannot be rewritten

# on: show progress at all; rewrite: the line is rewritten in place (a
# terminal), else each is a line of its own, one every $EVERY seconds.
sub new {
    my ($class, %opt) = @_;
    return bless { on => $opt{on} ? 1 : 0, rewrite => $opt{rewrite} ? 1 : 0, fh => $opt{fh} || \*STDERR,
                   clock => $opt{clock} || \&Time::HiRes::time, shown => 0, last => undef,
                   message => '' }, $class;
}

sub on { $_[0]{on} }

sub show {
    my ($self, $message) = @_;
    return unless $self->{on};
    $message = substr $message, 0, $WIDTH;
    $self->{message} = $message;
    my $fh = $self->{fh};
    if (!$self->{rewrite}) {
        my $now = $self->{clock}->();
        return if defined $self->{last} && $now - $self->{last} < $EVERY;
        $self->{last} = $now;
        print {$fh} $message, "\n";
        return;
    }
    print {$fh} "\r", $message, ' ' x ($self->{shown} > length $message ? $self->{shown} - length $message : 0);
    $self->{shown} = length $message;
    return;
}

# A line that stays (a prefix's result as soon as it is known), the
# progress line shown again below it.
sub line {
    my ($self, $text) = @_;
    return unless $self->{on};
    my $message = $self->{message};
    $self->clear;
    print { $self->{fh} } $text, "\n";
    $self->show($message) if $self->{rewrite} && length $message;
    return;
}

sub clear {
    my ($self) = @_;
    return unless $self->{on} && $self->{shown};
    print { $self->{fh} } "\r", ' ' x $self->{shown}, "\r";
    $self->{shown} = 0;
    return;
}

# ---- counting work done, and the time left ----------------------------------------

sub start_count {
    my ($self, $total, $what) = @_;
    @$self{qw(total what done started)} = ($total, $what, 0, $self->{clock}->());
    return;
}

# One more done (with $line, its result, shown to stay); the progress line
# says how many of the total, how many at work, and about how long is left.
sub count_done {
    my ($self, $line, $running) = @_;
    $self->{done}++;
    $self->line($line) if defined $line;
    $self->show_count($running);
    return;
}

sub show_count {
    my ($self, $running) = @_;
    my $left = $self->time_left;
    $self->show(sprintf '%s: %d/%d done%s%s', $self->{what}, $self->{done}, $self->{total},
                        ($running ? ", $running at work" : ''), (defined $left ? ', about ' . duration_text($left) . ' left' : ''));
    return;
}

# Seconds left at the pace so far; undef before the first is done.
sub time_left {
    my ($self) = @_;
    return undef unless $self->{done};
    my $spent = $self->{clock}->() - $self->{started};
    return $spent / $self->{done} * ($self->{total} - $self->{done});
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Progress - cmrx-dict's progress line: what it does, how much is done, the time left

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::Progress;

    my $progress = Cache::Memcached::RustXS::Dict::Progress->new(on => 1, rewrite => -t STDERR);
    $progress->show('listing keys: 120000');
    $progress->start_count(3, 'prefixes tuned');
    $progress->count_done("user: cover 65536, level 9", 2) for 1 .. 3;   # lines that stay
    $progress->clear;

=head1 DESCRIPTION

What L<cmrx-dict> shows on standard error while it works: on a terminal,
one line rewritten in place; elsewhere (with C<--progress>) a line every
10 seconds (C<$Cache::Memcached::RustXS::Dict::Progress::EVERY>); the
result of each prefix as a line of its own as soon as it is known.

=head1 METHODS

=over 4

=item new(on => $bool, rewrite => $bool, fh => \*STDERR, clock => sub { time })

Shows nothing unless C<on>; rewrites its line when C<rewrite>.

=item show($message), line($text), clear

The progress line (at most 78 characters); a line that stays, the
progress line shown again below it; the progress line wiped.

=item start_count($total, $what), count_done($line, $running), show_count($running), time_left

Counting C<$total> pieces of work: each done adds its C<$line> (when
defined) and shows C<"$what: 3/200 done, 2 at work, about 4m 10s
left">; C<time_left> is the seconds left at the pace so far (undef before
the first is done).

=item on

Whether it shows anything.

=back

=head1 SEE ALSO

L<cmrx-dict>'s C<--progress>.

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
