package CMRXTest::Source;

# Test helper: the Perl files of this tree, their code and the subs they
# define, for the tests that read source (t/08's helper homes,
# xt/test-hygiene.t). See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use File::Find ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(code_of perl_files subs_defined function_lengths);

my %code;    # file => its code, read once per process

# The code of a Perl file: without its POD, comments and __END__ part.
sub code_of {
    my ($file) = @_;
    return $code{$file} //= _read_code($file);
}

sub _read_code {
    my ($file) = @_;
    open my $fh, '<', $file or die "$file: $!";
    my $text = do { local $/; <$fh> } // '';
    $text =~ s/^__(?:END|DATA)__\b.*//ms;
    $text =~ s/^=(?!cut\b)\w.*?(?:^=cut\b[^\n]*(?:\n|\z)|\z)//msg;    # POD
    $text =~ s/^=cut\b[^\n]*\n?//mg;
    $text =~ s/(?:^|[ \t\r\f])#[^\n]*//mg;    # comments: a # first or after white space
    return $text;
}

# The names of the named subs the file's code defines (the last part of a
# qualified name), sorted.
sub subs_defined {
    my ($file) = @_;
    my %name = map { ($_ => 1) } code_of($file) =~ /^\s*sub\s+(?:[\w:]*::)?(\w+)/mg;
    return sort keys %name;
}

# [name, first line, lines] of each named function of a Perl or Rust file,
# in the order they stand: from its `sub`/`fn` line to the closing brace at
# the indentation it started at, both counted. A Rust file's #[cfg(test)]
# module at its end and a Perl file's __END__ part are left out, as are
# declarations without a body.
sub function_lengths {
    my ($file) = @_;
    open my $fh, '<', $file or die "$file: $!";
    my @lines = <$fh>;
    my $rust = $file =~ /\.rs\z/;
    my $start = $rust ? qr/^(\s*)(?:pub(?:\([\w:]+\))?\s+)?(?:const\s+)?(?:unsafe\s+)?(?:extern\s+"C"\s+)?fn\s+(\w+)/
                      : qr/^(\s*)sub\s+(?:[\w:]*::)?(\w+)\b/;
    my $end = $rust ? qr/^#\[cfg\(test\)\]\s*$/ : qr/^__(?:END|DATA)__\b/;
    my @found;
    for (my $i = 0; $i < @lines && $lines[$i] !~ $end; $i++) {
        my ($indent, $name) = $lines[$i] =~ $start or next;
        my $last = _body_end(\@lines, $i, $indent) // next;
        push @found, [ $name, $i + 1, $last - $i + 1 ];
    }
    return @found;
}

# The index of the line that closes the function starting at line $first,
# or undef for a declaration without a body.
sub _body_end {
    my ($lines, $first, $indent) = @_;
    my $opened;
    for my $i ($first .. $#$lines) {
        my $line = $lines->[$i];
        $opened ||= $line =~ /\{/;
        return undef if !$opened && $line =~ /;\s*(?:(?:#|\/\/).*)?$/;
        return $i if $opened && $i == $first && $line =~ /\}\s*;?\s*$/;    # on one line
        return $i if $i > $first && $line =~ /^\Q$indent\E\}/;
    }
    return undef;
}

# The Perl files under the folders (.pm, .pl, .t, and scripts whose first
# line names perl), sorted.
sub perl_files {
    my (@dirs) = @_;
    my @files;
    File::Find::find({ no_chdir => 1, wanted => sub {
        return unless -f $_;
        return push @files, $_ if /\.(?:pm|pl|t)\z/;
        open my $fh, '<', $_ or return;
        my $first = <$fh>;
        push @files, $_ if defined $first && $first =~ /\A#!.*perl/;
    } }, grep { -d } @dirs);
    return sort @files;
}

1;

__END__

=head1 NAME

CMRXTest::Source - the Perl files of this tree, their code and their subs

=head1 SYNOPSIS

    use lib 't/lib';
    use CMRXTest::Source qw(code_of perl_files subs_defined);

    for my $file (perl_files(qw(t xt))) {
        my $code = code_of($file);          # no POD, comments or __END__ part
        my @subs = subs_defined($file);     # the named subs it defines
        ...
    }

=head1 FUNCTIONS

=over 4

=item C<perl_files(@folders)>

The Perl files under the folders that exist: F<.pm>, F<.pl> and F<.t>
files, and files whose first line is a perl C<#!> line; sorted.

=item C<code_of($file)>

The file's code: its POD, its comments (a C<#> at the start of a line or
after white space) and everything from C<__END__> or C<__DATA__> on are
left out. Dies when the file cannot be read. Each file is read once per
process.

=item C<function_lengths($file)>

C<[$name, $first_line, $lines]> for each named function of a Perl (C<sub>)
or Rust (C<fn>) file, in file order: from its first line to the closing
brace at the indentation it started at, both counted, comments and blank
lines included. A Rust file's C<#[cfg(test)]> module and a Perl file's
C<__END__> part are not read; declarations without a body are left out.

=item C<subs_defined($file)>

The names of the named subs the file's code defines (C<sub name> at the
start of a line; of a qualified name, its last part), sorted.

=back

=cut
